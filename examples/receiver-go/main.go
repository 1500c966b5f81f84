// Command receiver-go is a service that receives hookinbox's destination
// requests: it checks each request's Standard Webhooks signature and
// applies each webhook-id once. Run it with the destination's secret:
//
//	WEBHOOK_SECRET=whsec_... go run ./examples/receiver-go -listen 127.0.0.1:9100
//
// and point a destination at http://127.0.0.1:9100/webhooks.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9100", "address to listen on")
	flag.Parse()
	wh, err := standardwebhooks.NewWebhook(os.Getenv("WEBHOOK_SECRET"))
	if err != nil {
		log.Fatalf("WEBHOOK_SECRET: %v", err)
	}
	// webhook-id is the same on every retry of one delivery to one
	// destination. A real service records it in its database, in the same
	// transaction as the effect, under a unique constraint; a map stands in
	// for that here.
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	http.HandleFunc("POST /webhooks", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 5<<20))
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		// Verify checks the signature over "{webhook-id}.{webhook-timestamp}.{body}"
		// and that the timestamp is recent.
		if err := wh.Verify(body, r.Header); err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		id := r.Header.Get("webhook-id")
		mu.Lock()
		duplicate := seen[id]
		seen[id] = true
		mu.Unlock()
		if duplicate {
			fmt.Printf("duplicate %s\n", id) // already applied: answer 2xx so hookinbox stops retrying
			w.WriteHeader(http.StatusOK)
			return
		}
		// The effect. Hookinbox-Stale: true means an older event of this
		// resource than one already sent (ordered routes).
		fmt.Printf("applied %s source=%s event=%s stale=%s bytes=%d\n", id, r.Header.Get("Hookinbox-Source"),
			r.Header.Get("Hookinbox-Event"), r.Header.Get("Hookinbox-Stale"), len(body))
		w.WriteHeader(http.StatusOK)
	})
	log.Printf("receiving on http://%s/webhooks", *listen)
	log.Fatal(http.ListenAndServe(*listen, nil))
}

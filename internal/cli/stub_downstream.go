package cli

import (
	"context"
	"fmt"

	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

// stubDownstreamCmd runs a stand-in for the APIs the shipped handlers call,
// so the saga and a forward_url destination can be watched without real
// services. It applies each Idempotency-Key's effect once and logs every
// request.
func stubDownstreamCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("stub-downstream", e)
	listen := fs.String("listen", "127.0.0.1:9090", "address to serve on")
	refuse := fs.Bool("refuse-fulfillment", false, "answer every POST /fulfill with 422 (a final refusal), triggering the saga's refund")
	failFirst := fs.Int("fail-first", 0, "answer the first N requests to each path with 500, to watch retries keep their key")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger := newLogger(e.stderr)
	s, err := downstreamstub.Start(*listen, logger)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, path := range []string{"/fulfill", "/v1/refunds", "/forward"} {
		var script []downstreamstub.Action
		for i := 0; i < *failFirst; i++ {
			script = append(script, downstreamstub.Fail)
		}
		s.Script(path, script...)
	}
	if *refuse {
		s.SetFallback("/fulfill", downstreamstub.Refuse)
	}
	fmt.Fprintf(e.stdout, "stub downstream on %s: POST /fulfill, /v1/refunds, /forward\n", s.URL)
	<-ctx.Done()
	return nil
}

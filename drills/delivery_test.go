package drills

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/hookinbox/hookinbox/handlers"
	stripehandlers "github.com/hookinbox/hookinbox/handlers/stripe"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/verify"
)

// delivery is one webhook as a provider holds it: the id and body are fixed
// for its lifetime, the signature is made afresh for every attempt (Stripe
// and Standard Webhooks sign a timestamp), as the providers do.
type delivery struct {
	Source string // github, stripe or billing
	ID     string // the provider's delivery id
	Event  string
	Body   []byte
	PI     string // stripe: the payment intent the saga credits and fulfills
}

// Downstream effects a stored delivery must cause, by the stub's path.
const (
	fulfillPath = "/fulfill"
	refundPath  = "/v1/refunds"
	forwardPath = "/forward"
)

// fulfillKey is the Idempotency-Key the saga sends for a stripe delivery.
func fulfillKey(deliveryID string) string {
	return handlers.DeriveKey("stripe", deliveryID, stripehandlers.SagaHandlerName, "fulfill")
}

func refundKey(deliveryID string) string {
	return handlers.DeriveKey("stripe", deliveryID, stripehandlers.SagaHandlerName, "refund")
}

// forwardKey is the Idempotency-Key (and webhook-id) billing's forward_url
// destination gets for a billing delivery.
func forwardKey(deliveryID string) string {
	return destination.Key("billing", deliveryID, config.ForwardDestination("billing"))
}

// githubForwardKey is the Idempotency-Key github's forward_url destination
// gets for a github delivery, where a process has it
// (serveConfig.GitHubForward).
func githubForwardKey(deliveryID string) string {
	return destination.Key("github", deliveryID, config.ForwardDestination("github"))
}

// newDelivery makes delivery n of a run, cycling through the three
// sources.
func newDelivery(run string, n int) delivery {
	switch n % 3 {
	case 0:
		return githubPush(run, n)
	case 1:
		return stripePayment(run, n)
	default:
		return billingInvoice(run, n)
	}
}

// githubPush has no handler: its row ends up skipped.
func githubPush(run string, n int) delivery {
	return delivery{Source: "github", ID: fmt.Sprintf("%s-gh-%d", run, n), Event: "push", Body: mustJSON(map[string]any{
		"ref": "refs/heads/main", "after": fmt.Sprintf("%040x", n),
		"repository": map[string]any{"full_name": "drills/" + run, "id": n},
	})}
}

// stripePayment is a payment_intent.succeeded for its own payment intent:
// one ledger credit and one fulfillment.
func stripePayment(run string, n int) delivery {
	id, pi := fmt.Sprintf("evt_%s_%d", run, n), fmt.Sprintf("pi_%s_%d", run, n)
	return delivery{Source: "stripe", ID: id, Event: "payment_intent.succeeded", PI: pi, Body: mustJSON(map[string]any{
		"id": id, "object": "event", "type": "payment_intent.succeeded", "created": time.Now().Unix(),
		"data": map[string]any{"object": map[string]any{"id": pi, "object": "payment_intent", "amount": 1000 + n, "currency": "eur"}},
	})}
}

// billingInvoice is a Standard Webhooks invoice.paid: one forward.
func billingInvoice(run string, n int) delivery {
	return delivery{Source: "billing", ID: fmt.Sprintf("msg_%s_%d", run, n), Event: "invoice.paid", Body: mustJSON(map[string]any{
		"type": "invoice.paid", "timestamp": time.Now().UTC().Format(time.RFC3339),
		"data": map[string]any{"id": fmt.Sprintf("in_%s_%d", run, n), "amount_paid": 1000 + n},
	})}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// signers sign as each drill source's provider would.
var signers = func() map[string]verify.Signer {
	m := map[string]verify.Signer{}
	for source, ps := range map[string][2]string{
		"github":  {verify.ProviderGitHub, githubSecret},
		"stripe":  {verify.ProviderStripe, stripeSecret},
		"billing": {verify.ProviderStandard, billingSecret},
	} {
		s, err := verify.NewSigner(ps[0], ps[1])
		if err != nil {
			panic(err)
		}
		m[source] = s
	}
	return m
}()

// sign returns d's headers signed at now.
func sign(d delivery, now time.Time) http.Header {
	h, err := signers[d.Source].Sign(d.Body, verify.Message{ID: d.ID, EventType: d.Event}, now)
	if err != nil {
		panic(err)
	}
	return h
}

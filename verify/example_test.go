package verify_test

import (
	"context"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/verify"
)

// A GitHub webhook checked against the source's secrets: the old secret
// still verifies while it is listed beside the new one, and a body changed
// in transit does not.
func Example() {
	body := []byte(`{"action":"opened","issue":{"number":7}}`)
	signer, err := verify.NewSigner(verify.ProviderGitHub, "old-secret")
	if err != nil {
		panic(err)
	}
	header, err := signer.Sign(body, verify.Message{ID: "d-1", EventType: "issues"}, time.Time{})
	if err != nil {
		panic(err)
	}
	v, err := verify.New(verify.Config{Provider: verify.ProviderGitHub, Secrets: []string{"new-secret", "old-secret"}})
	if err != nil {
		panic(err)
	}
	d, err := verify.VerifyRequest(context.Background(), v, verify.Request{Body: body, Header: header})
	fmt.Println(d.ID, d.EventType, err)

	tampered := append([]byte(nil), body...)
	tampered[len(tampered)-2] = '8'
	_, err = verify.VerifyRequest(context.Background(), v, verify.Request{Body: tampered, Header: header})
	fmt.Println(err)
	// Output:
	// d-1 issues <nil>
	// invalid signature: no configured secret matches X-Hub-Signature-256; check the webhook secret
}

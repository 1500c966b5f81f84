package verify_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/verify"
)

// What each provider's signature covers: the senders whose requests can
// be replayed under a fresh id are the ones ingest deduplicates by body.
func TestSignatureCovers(t *testing.T) {
	t.Parallel()
	replayable := map[string]bool{}
	for _, p := range verify.Providers() {
		if p == verify.ProviderHMAC {
			continue
		}
		replayable[p] = verify.SignatureCovers(p, nil).ReplayableUnderNewID()
	}
	want := map[string]bool{"github": true, "gitlab": true, "twilio": true, "shopify": true, "razorpay": true, "bitbucket": true,
		"linear": true} // Linear's time is signed, its id is not: a replay within the tolerance
	for p, r := range replayable {
		require.Equal(t, want[p], r, p)
	}
	require.Equal(t, verify.Covered{ID: true, EventType: true, Timestamp: true}, verify.SignatureCovers("svix", nil))
	require.Equal(t, verify.Covered{ID: false, EventType: true, Timestamp: true}, verify.SignatureCovers("linear", nil), "a header id, a signed time")
	require.Equal(t, verify.Covered{ID: true, EventType: true, Timestamp: false}, verify.SignatureCovers("checkout", nil), "the id is in the body")
	require.Equal(t, verify.Covered{}, verify.SignatureCovers("shopify", nil), "X-Shopify-Topic is a header")
	require.Equal(t, verify.Covered{EventType: true}, verify.SignatureCovers("razorpay", nil), "the event is in the body")

	scheme := verify.HMACScheme{SignatureHeader: "X-Sig", ID: verify.Field{Header: "X-Id"}}
	require.True(t, verify.SignatureCovers("hmac", &scheme).ReplayableUnderNewID())
	scheme.SignedContent = "{id}.{body}"
	require.False(t, verify.SignatureCovers("hmac", &scheme).ReplayableUnderNewID())
	scheme.EventType = verify.Field{Header: "X-Event"}
	require.False(t, verify.SignatureCovers("hmac", &scheme).EventType, "no template signs a header's type")
	scheme.EventType = verify.Field{JSON: "type"}
	require.True(t, verify.SignatureCovers("hmac", &scheme).EventType)
}

// Body dedup compares the event type where the signature covers it, and
// for the senders that send one body under several unsigned types;
// elsewhere a replayer could pick any type, and the body alone decides.
func TestDedupBodyByType(t *testing.T) {
	t.Parallel()
	byType := map[string]bool{}
	for _, p := range verify.Providers() {
		if p == verify.ProviderHMAC {
			continue
		}
		if verify.SignatureCovers(p, nil).ReplayableUnderNewID() {
			byType[p] = verify.DedupBodyByType(p, nil)
		}
	}
	require.Equal(t, map[string]bool{"github": false, "gitlab": false, "shopify": true, "bitbucket": true,
		"razorpay": true, "twilio": true, "linear": true}, byType)
	scheme := verify.HMACScheme{SignatureHeader: "X-Sig", ID: verify.Field{Header: "X-Id"}, EventType: verify.Field{Header: "X-Event"}}
	require.False(t, verify.DedupBodyByType("hmac", &scheme))
}

// Twilio signs its parameters sorted: every body that verifies with one
// signature has one dedup content, whatever its order or encoding.
func TestDedupContentIsWhatTheSignatureCovers(t *testing.T) {
	t.Parallel()
	a := verify.DedupContent("twilio", []byte("To=%2B1555&From=%2B1666&Body=hi"))
	for _, b := range []string{"From=%2B1666&Body=hi&To=%2B1555", "Body=h%69&To=%2B1555&From=%2B1666&", "To=%2b1555&From=%2b1666&Body=hi"} {
		require.Equal(t, string(a), string(verify.DedupContent("twilio", []byte(b))), b)
	}
	require.NotEqual(t, string(a), string(verify.DedupContent("twilio", []byte("To=%2B1555&From=%2B1666&Body=ho"))))
	require.Nil(t, verify.DedupContent("shopify", []byte("raw&b=1&a=2")), "others: the bytes, as they are")
}

package downstreamstub_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

func post(t *testing.T, client *http.Client, url, key string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(`{}`)))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", key)
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

// A slow first request outlives its client; the retry with the same key
// gets 409 and Retry-After until the first finishes, which then applies
// the effect once, and later retries get 200 at once.
func TestKeyInProgressGetsConflict(t *testing.T) {
	t.Parallel()
	s := downstreamstub.New(t)
	s.SetProcessingDelay("/slow", 700*time.Millisecond)

	_, err := post(t, &http.Client{Timeout: 100 * time.Millisecond}, s.URL+"/slow", "k1")
	require.Error(t, err, "the first request outlives the client's timeout")

	resp, err := post(t, http.DefaultClient, s.URL+"/slow", "k1")
	require.NoError(t, err)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Empty(t, s.Effects("/slow"), "nothing applied while the first is processing")

	require.Eventually(t, func() bool { return s.Effects("/slow")["k1"] == 1 }, 5*time.Second, 10*time.Millisecond)
	resp, err = post(t, &http.Client{Timeout: 300 * time.Millisecond}, s.URL+"/slow", "k1")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, map[string]int{"k1": 1}, s.Effects("/slow"))
	require.Len(t, s.Requests("/slow"), 3)
}

func TestRefuseIsUnprocessableEntity(t *testing.T) {
	t.Parallel()
	s := downstreamstub.New(t)
	s.Script("/fulfill", downstreamstub.Refuse)
	resp, err := post(t, http.DefaultClient, s.URL+"/fulfill", "k1")
	require.NoError(t, err)
	require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
	require.Empty(t, s.Effects("/fulfill"))
}

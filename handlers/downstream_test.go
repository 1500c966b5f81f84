package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

// A downstream answering with the status and Retry-After in the query.
func statusServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Idempotency-Key") == "" {
			http.Error(w, "no key", http.StatusBadRequest)
			return
		}
		if ra := r.URL.Query().Get("retry_after"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		status, _ := strconv.Atoi(r.URL.Query().Get("status"))
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCallPostClassifiesTheAnswer(t *testing.T) {
	t.Parallel()
	srv := statusServer(t)
	cases := []struct {
		name, query string
		final       []int
		check       func(t *testing.T, err error)
	}{
		{"2xx", "status=201", nil, func(t *testing.T, err error) { require.NoError(t, err) }},
		{"422 is final", "status=422", nil, func(t *testing.T, err error) {
			var refused *handlers.RefusedError
			require.ErrorAs(t, err, &refused)
			require.Equal(t, 422, refused.Status)
		}},
		{"a configured final status", "status=402", []int{402, 422}, func(t *testing.T, err error) {
			require.ErrorAs(t, err, new(*handlers.RefusedError))
		}},
		{"409 is in progress, not a refusal", "status=409&retry_after=2", nil, func(t *testing.T, err error) {
			var later *handlers.RetryLaterError
			require.ErrorAs(t, err, &later)
			require.Equal(t, handlers.RetryLaterError{Status: 409, After: 2 * time.Second}, *later)
		}},
		{"429 with Retry-After", "status=429&retry_after=1", nil, func(t *testing.T, err error) {
			var later *handlers.RetryLaterError
			require.ErrorAs(t, err, &later)
			require.Equal(t, time.Second, later.After)
		}},
		{"503 without Retry-After", "status=503", nil, func(t *testing.T, err error) {
			var later *handlers.RetryLaterError
			require.ErrorAs(t, err, &later)
			require.Zero(t, later.After)
		}},
		{"Retry-After is bounded", "status=503&retry_after=999999", nil, func(t *testing.T, err error) {
			var later *handlers.RetryLaterError
			require.ErrorAs(t, err, &later)
			require.Equal(t, handlers.MaxRetryAfter, later.After)
		}},
		{"500 retries", "status=500", nil, func(t *testing.T, err error) {
			require.Error(t, err)
			require.False(t, handlers.IsPermanent(err))
			require.False(t, errors.As(err, new(*handlers.RefusedError)))
			require.False(t, errors.As(err, new(*handlers.RetryLaterError)))
		}},
		{"another 4xx is permanent", "status=400", nil, func(t *testing.T, err error) {
			require.True(t, handlers.IsPermanent(err))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := handlers.Call{URL: srv.URL + "/?" + tc.query, Key: "k", FinalStatuses: tc.final}.Post(context.Background(), nil)
			tc.check(t, err)
		})
	}

	_, err := handlers.Call{URL: srv.URL + "/?status=200"}.Post(context.Background(), nil)
	require.True(t, handlers.IsPermanent(err), "a call without a key is never sent")
}

func TestJobResult(t *testing.T) {
	t.Parallel()
	job := func(attempt int, metadata string) *rivertype.JobRow {
		return &rivertype.JobRow{Attempt: attempt, MaxAttempts: 3, Metadata: []byte(metadata)}
	}
	later := &handlers.RetryLaterError{Status: 409, After: 2 * time.Second}
	retryable := errors.New("POST x: 500 Internal Server Error")

	require.NoError(t, handlers.JobResult(job(1, `{}`), nil))
	require.ErrorAs(t, handlers.JobResult(job(1, `{}`), &handlers.RefusedError{Status: 422}), new(*river.JobCancelError))
	require.ErrorAs(t, handlers.JobResult(job(1, `{}`), handlers.Permanent(retryable)), new(*river.JobCancelError))
	require.Equal(t, retryable, handlers.JobResult(job(1, `{}`), retryable))

	var snooze *river.JobSnoozeError
	require.ErrorAs(t, handlers.JobResult(job(3, `{"snoozes":2}`), later), &snooze, "Retry-After snoozes, spending no attempt")
	require.Equal(t, 2*time.Second, snooze.Duration)
	require.Equal(t, later, handlers.JobResult(job(1, `{"snoozes":3}`), later), "past MaxAttempts snoozes, it spends attempts")
	noAfter := &handlers.RetryLaterError{Status: 409}
	require.Equal(t, noAfter, handlers.JobResult(job(1, `{}`), noAfter), "no Retry-After: River's backoff")
}

// A downstream's redirect is retried, never followed and never taken for a
// refusal: the landing host gets neither the POST nor its key and headers,
// even from a client the caller configured to follow redirects, and the
// error names the Location and the fix.
func TestCallPostNeverFollowsARedirect(t *testing.T) {
	t.Parallel()
	var landed atomic.Int64
	landing := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { landed.Add(1) }))
	t.Cleanup(landing.Close)
	for _, status := range []int{301, 302, 303, 307, 308} {
		srv := httptest.NewServer(http.RedirectHandler(landing.URL+"/landing", status))
		t.Cleanup(srv.Close)
		for _, client := range []*http.Client{nil, {}} {
			got, err := handlers.Call{URL: srv.URL + "/fulfill?api_key=s3cret", Key: "k", Header: http.Header{"X-Api-Key": {"k1"}}}.
				Post(context.Background(), client)
			require.Equal(t, status, got)
			require.ErrorContains(t, err, "redirects are not followed")
			require.ErrorContains(t, err, "Location "+landing.URL+"/***")
			require.NotContains(t, err.Error(), "s3cret")
			require.False(t, handlers.IsPermanent(err), "a wrong URL is retried, not compensated for")
			require.False(t, errors.As(err, new(*handlers.RefusedError)))
		}
	}
	require.Zero(t, landed.Load())
}

// A failed call's error masks the URL's credentials (Go's client names the
// URL, query and all) and still unwraps to the cause.
func TestCallPostMasksTheURLInErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	_, err := handlers.Call{URL: srv.URL + "/fulfill?api_key=s3cret", Key: "k"}.Post(context.Background(), nil)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	require.ErrorContains(t, err, "/***?api_key=***")
	require.NotContains(t, err.Error(), "s3cret")
	require.NotContains(t, err.Error(), "fulfill")
}

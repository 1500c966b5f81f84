package destination_test

import (
	"bufio"
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
)

// seen records the requests a hostile server got.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) add(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r.Clone(context.Background()))
}

func (s *seen) all() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// serveOn starts h on a loopback address of its own (127.0.0.1 or another
// of 127/8, a different host as far as a client can tell).
func serveOn(t *testing.T, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// attempt is one recorded attempt, as the admin API and console show it.
type attempt struct {
	status   *int
	err      *string
	response *string
}

// twoAttempts makes a destination give up after one retry.
func twoAttempts(d *config.Destination) {
	d.Retry = config.Retry{Schedule: schedule(50 * time.Millisecond)}
	d.Headers["X-Api-Key"] = "api-key-for-app-only"
}

// sendTo delivers one event to a destination at url and waits for its
// send to end; it returns the send's state and its attempts.
func sendTo(t *testing.T, url string, adjust func(d *config.Destination)) (string, []attempt) {
	t.Helper()
	b := setupWith(t, setupOpts{dest: func(d *config.Destination) {
		d.URL = url
		twoAttempts(d)
		if adjust != nil {
			adjust(d)
		}
	}})
	id, _ := b.deliver(t, "invoice.paid", "inv_h", time.Now())
	state := b.waitSend(t, id, "succeeded", "failed")
	rows, err := b.pool.Query(context.Background(), `
		SELECT a.status, a.error, a.response FROM destination_attempt a
		JOIN destination_send s ON s.id = a.send_id WHERE s.delivery_id = $1 ORDER BY a.attempt`, id)
	require.NoError(t, err)
	defer rows.Close()
	var out []attempt
	for rows.Next() {
		var a attempt
		require.NoError(t, rows.Scan(&a.status, &a.err, &a.response))
		out = append(out, a)
	}
	require.NoError(t, rows.Err())
	return state, out
}

// A redirect is a failed attempt, retried like any non-2xx, never
// followed: the landing page (on this host or another) gets nothing, so
// neither the body nor the configured headers nor the signature leave the
// destination's host, and the error names the Location and the fix.
func TestRedirectIsAFailedAttemptNeverFollowed(t *testing.T) {
	t.Parallel()
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, host := range []string{"127.0.0.1", "127.0.0.2"} {
			t.Run(fmt.Sprintf("%d to %s", status, host), func(t *testing.T) {
				t.Parallel()
				var landed seen
				landing := serveOn(t, host, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { landed.add(r) }))
				var asked seen
				redirecting := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					asked.add(r)
					http.Redirect(w, r, landing.URL+"/landing?session=abc123", status)
				}))

				state, attempts := sendTo(t, redirecting.URL+"/hooks", nil)
				require.Equal(t, "failed", state)
				require.Len(t, attempts, 2, "the redirect was retried like any non-2xx")
				for _, a := range attempts {
					require.Equal(t, status, *a.status)
					require.Contains(t, *a.err, fmt.Sprintf("HTTP %d redirect (Location %s/***?session=***)", status, landing.URL))
					require.Contains(t, *a.err, "redirects are not followed")
					require.NotContains(t, *a.err, "abc123")
				}
				require.Empty(t, landed.all(), "nothing reached the redirect's target")
				for _, r := range asked.all() {
					require.Equal(t, http.MethodPost, r.Method)
					require.Equal(t, "api-key-for-app-only", r.Header.Get("X-Api-Key"))
				}
				require.Len(t, asked.all(), 2)
			})
		}
	}
}

// rawServer answers every connection with respond, below HTTP: the
// answers no well-behaved server library would give.
func rawServer(t *testing.T, respond func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				respond(c.(*net.TCPConn))
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/hooks"
}

// The answers a broken or hostile service gives: each is recorded as
// what it is, retried when it is not a 2xx, and bounded in time and
// memory.
func TestHostileAnswersAreRecordedAsWhatTheyAre(t *testing.T) {
	t.Parallel()
	t.Run("100 Continue then 500", func(t *testing.T) {
		t.Parallel()
		url := rawServer(t, func(c *net.TCPConn) {
			fmt.Fprint(c, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nboom")
		})
		state, attempts := sendTo(t, url, nil)
		require.Equal(t, "failed", state)
		require.Len(t, attempts, 2)
		require.Equal(t, 500, *attempts[0].status)
		require.Equal(t, "HTTP 500: boom", *attempts[0].err)
	})
	t.Run("200 with a body dripped past the timeout", func(t *testing.T) {
		t.Parallel()
		// The status line decides: the service took the delivery. Reading
		// the rest is bounded by the destination's timeout.
		url := rawServer(t, func(c *net.TCPConn) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
			for range 30 {
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
		state, attempts := sendTo(t, url, nil)
		require.Equal(t, "succeeded", state)
		require.Len(t, attempts, 1)
		require.Equal(t, 200, *attempts[0].status)
	})
	t.Run("a 32 MB answer is read no further than needed", func(t *testing.T) {
		t.Parallel()
		var written atomic.Int64
		url := rawServer(t, func(c *net.TCPConn) {
			const size = 32 << 20
			fmt.Fprintf(c, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: %d\r\n\r\n", size)
			chunk := []byte(strings.Repeat("e", 32<<10))
			for written.Load() < size {
				n, err := c.Write(chunk)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		})
		state, attempts := sendTo(t, url, nil)
		require.Equal(t, "failed", state)
		require.Len(t, attempts, 2)
		require.LessOrEqual(t, len(*attempts[0].response), 512)
		require.Less(t, written.Load(), int64(2*16<<20), "the sender hung up instead of reading it all, on both attempts")
	})
	t.Run("no Content-Length, ended by close", func(t *testing.T) {
		t.Parallel()
		url := rawServer(t, func(c *net.TCPConn) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\naccepted")
		})
		state, attempts := sendTo(t, url, nil)
		require.Equal(t, "succeeded", state)
		require.Equal(t, "accepted", *attempts[0].response)
	})
	t.Run("reset mid-answer", func(t *testing.T) {
		t.Parallel()
		url := rawServer(t, func(c *net.TCPConn) {
			fmt.Fprint(c, "HTTP/1.1 200 O")
			_ = c.SetLinger(0) // close sends RST
		})
		state, attempts := sendTo(t, url, nil)
		require.Equal(t, "failed", state)
		require.Len(t, attempts, 2)
		require.Nil(t, attempts[0].status)
		require.NotEmpty(t, *attempts[0].err)
	})
}

// A destination whose certificate a private CA signed: refused with the
// TLS error until its ca_file is configured, then delivered.
func TestTLSWithAPrivateCA(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)

	state, attempts := sendTo(t, srv.URL+"/hooks", nil)
	require.Equal(t, "failed", state)
	require.Contains(t, *attempts[0].err, "certificate signed by unknown authority")

	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	require.NoError(t, os.WriteFile(caFile, pemBytes, 0o600))
	state, _ = sendTo(t, srv.URL+"/hooks", func(d *config.Destination) { d.TLS.CAFile = caFile })
	require.Equal(t, "succeeded", state)
}

// A destination URL's credentials never reach an attempt's error: Go's
// client names the URL, query and all, when a request fails.
func TestURLCredentialsAreMaskedInErrors(t *testing.T) {
	t.Parallel()
	// Port 1: nothing listens there, and no other test's listener or
	// outgoing connection can take it, as one could a port closed after
	// 127.0.0.1:0 handed it out.
	const addr = "127.0.0.1:1"

	state, attempts := sendTo(t, "http://user:pa55word@"+addr+"/hooks?api_key=s3cret-key", nil)
	require.Equal(t, "failed", state)
	msg := *attempts[0].err
	require.Contains(t, msg, "connection refused")
	require.Contains(t, msg, "http://***@"+addr+"/***?api_key=***")
	require.NotContains(t, msg, "s3cret-key")
	require.NotContains(t, msg, "pa55word")

	bad := config.Destination{Name: "x", URL: "ftp://host/?token=s3cret-key"}
	require.ErrorContains(t, validate(bad), "token=***")
	require.NotContains(t, validate(bad).Error(), "s3cret-key")
	bad = config.Destination{Name: "x", URL: "https://host/", TLS: config.TLS{CAFile: filepath.Join(t.TempDir(), "missing.pem")}}
	require.ErrorContains(t, validate(bad), "ca_file:")
}

// A mistyped max_in_flight is refused with its name, not turned into a
// million slot rows.
func TestMaxInFlightIsBounded(t *testing.T) {
	t.Parallel()
	d := config.Destination{Name: "x", URL: "https://host/", MaxInFlight: destination.MaxMaxInFlight}
	require.NoError(t, validate(d))
	d.MaxInFlight = 1_000_000
	require.ErrorContains(t, validate(d), "max_in_flight: 1000000 is over 1000")
}

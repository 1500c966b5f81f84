package drills

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// rawRequest is an HTTP/1.1 request written byte for byte, so a drill can
// send what net/http refuses to (NUL in a header, dot segments and encoded
// slashes in the path, a lying Content-Length).
type rawRequest struct {
	Path   string
	Header [][2]string // in order, duplicates allowed
	Body   []byte
}

func (r rawRequest) bytes() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: %d\r\n", r.Path, len(r.Body))
	for _, h := range r.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return b.Bytes()
}

// signedHeader flattens signed headers into raw header lines.
func signedHeader(h http.Header) [][2]string {
	var out [][2]string
	for k, vs := range h {
		for _, v := range vs {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// rawAnswer is the status and error code a raw request got; Status 0 when
// the connection closed without an answer.
type rawAnswer struct {
	Status int
	Code   string
	Took   time.Duration
	Err    error
}

// sendRaw writes raw to addr on a new connection and reads one answer,
// within timeout.
func sendRaw(addr string, raw []byte, timeout time.Duration) rawAnswer {
	start := time.Now()
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return rawAnswer{Err: err, Took: time.Since(start)}
	}
	defer conn.Close()
	_ = conn.SetDeadline(start.Add(timeout))
	// The server may answer (413, 431) and close before reading it all.
	go func() { _, _ = conn.Write(raw) }()
	return readAnswer(conn, start)
}

func readAnswer(conn net.Conn, start time.Time) rawAnswer {
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return rawAnswer{Err: err, Took: time.Since(start)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(body, &e)
	code := e.Error.Code
	if code == "" {
		code = e.Status
	}
	return rawAnswer{Status: resp.StatusCode, Code: code, Took: time.Since(start)}
}

// dripRequest sends a request's head and then its body one byte per
// interval, like a slowloris client, and returns what the server answered
// and when. It stops dripping once the server has answered or closed.
func dripRequest(addr, path string, header [][2]string, bodyLen int, interval, timeout time.Duration) rawAnswer {
	start := time.Now()
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return rawAnswer{Err: err}
	}
	defer conn.Close()
	_ = conn.SetDeadline(start.Add(timeout))
	head := rawRequest{Path: path, Header: header}.bytes()
	head = bytes.Replace(head, []byte("Content-Length: 0"), fmt.Appendf(nil, "Content-Length: %d", bodyLen), 1)
	done := make(chan rawAnswer, 1)
	go func() { done <- readAnswer(conn, start) }()
	if _, err := conn.Write(head); err != nil {
		return <-done
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; i < bodyLen; i++ {
		select {
		case a := <-done:
			return a
		case <-tick.C:
			if _, err := conn.Write([]byte(strings.Repeat("x", 1))); err != nil {
				return <-done
			}
		}
	}
	return <-done
}

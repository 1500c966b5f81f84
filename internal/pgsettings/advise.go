package pgsettings

import "fmt"

// What a busy inbox wants of its server (docs/operations.md, "Sizing").
const (
	WantMaxWALSize    = 4 << 30
	WantSharedBuffers = 512 << 20
)

// Advise says which of s are far from what hookinbox needs. The durability
// settings count on every server; the sizes only on a server of the
// user's (tuned is false): the embedded one sizes its own.
func Advise(s Settings, tuned bool) []Advice {
	var out []Advice
	if v := s["fsync"].Value; v == "off" {
		out = append(out, Advice{Setting: "fsync", Value: v, Want: "on", Durable: true,
			Why: "a crash of the server's machine can lose or corrupt deliveries hookinbox already acknowledged"})
	}
	if v := s["synchronous_commit"].Value; v == "off" {
		out = append(out, Advice{Setting: "synchronous_commit", Value: v, Want: "on", Durable: true,
			Why: "a commit returns before its WAL is on disk: a server crash loses the deliveries of the last moments, which hookinbox already acknowledged"})
	}
	if v := s["full_page_writes"].Value; v == "off" {
		out = append(out, Advice{Setting: "full_page_writes", Value: v, Want: "on", Durable: true,
			Why: "a crash during a page write can leave a torn page that recovery cannot repair"})
	}
	if tuned {
		return out
	}
	if st, ok := s["max_wal_size"]; ok && st.Bytes > 0 && st.Bytes < WantMaxWALSize {
		out = append(out, Advice{Setting: "max_wal_size", Value: st.Value, Want: size(WantMaxWALSize),
			Why: "a busy inbox checkpoints every few seconds, and after each checkpoint every first page change logs the whole page: the ack p99 rises"})
	}
	if v := s["wal_init_zero"].Value; v == "on" {
		out = append(out, Advice{Setting: "wal_init_zero", Value: v, Want: "off",
			Why: "each new 16 MB WAL segment is filled with zeros and synced while every commit waits"})
	}
	if st, ok := s["shared_buffers"]; ok && st.Bytes > 0 && st.Bytes < WantSharedBuffers {
		out = append(out, Advice{Setting: "shared_buffers", Value: st.Value, Want: "at least " + size(WantSharedBuffers),
			Why: "the inbox's indexes outgrow it within minutes of steady traffic, and then every insert reads a page back"})
	}
	return out
}

func size(b int64) string {
	if b >= 1<<30 && b%(1<<30) == 0 {
		return fmt.Sprintf("%dGB", b>>30)
	}
	return fmt.Sprintf("%dMB", b>>20)
}

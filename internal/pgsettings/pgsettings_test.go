package pgsettings

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// The test server runs with synchronous_commit=off and PostgreSQL's 1GB
// max_wal_size (internal/pgembed): read from the real server, both are
// advised on, and the sizes come out in bytes.
func TestReadAdvisesOnTheTestServer(t *testing.T) {
	t.Parallel()
	s, err := Read(context.Background(), testdb.New(t))
	require.NoError(t, err)
	require.Len(t, s, len(names))
	require.Equal(t, Setting{Value: "1GB", Bytes: 1 << 30}, s["max_wal_size"])
	require.Positive(t, s["shared_buffers"].Bytes)
	advised := map[string]bool{}
	for _, a := range Advise(s, false) {
		advised[a.Setting] = a.Durable
	}
	require.Equal(t, true, advised["synchronous_commit"])
	require.Contains(t, advised, "max_wal_size")
}

func TestAdvise(t *testing.T) {
	t.Parallel()
	good := Settings{"fsync": {Value: "on"}, "synchronous_commit": {Value: "on"}, "full_page_writes": {Value: "on"},
		"max_wal_size": {Value: "4GB", Bytes: 4 << 30}, "wal_init_zero": {Value: "off"}, "shared_buffers": {Value: "512MB", Bytes: 512 << 20}}
	require.Empty(t, Advise(good, false))

	stock := Settings{"fsync": {Value: "on"}, "synchronous_commit": {Value: "on"}, "full_page_writes": {Value: "on"},
		"max_wal_size": {Value: "1GB", Bytes: 1 << 30}, "wal_init_zero": {Value: "on"}, "shared_buffers": {Value: "128MB", Bytes: 128 << 20}}
	require.Equal(t, []string{"max_wal_size", "wal_init_zero", "shared_buffers"}, settingsOf(Advise(stock, false)))
	require.Empty(t, Advise(stock, true), "the embedded server sizes its own")

	unsafe := Settings{"fsync": {Value: "off"}, "synchronous_commit": {Value: "off"}, "full_page_writes": {Value: "off"}}
	for _, tuned := range []bool{false, true} {
		advice := Advise(unsafe, tuned)
		require.Equal(t, []string{"fsync", "synchronous_commit", "full_page_writes"}, settingsOf(advice))
		for _, a := range advice {
			require.True(t, a.Durable, a.Setting)
		}
	}
	require.Empty(t, Advise(Settings{"synchronous_commit": {Value: "local"}}, true), "local still waits for the server's own disk")
}

func TestBytesOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw, unit string
		want      int64
	}{{"16384", "8kB", 128 << 20}, {"1024", "MB", 1 << 30}, {"4096", "kB", 4 << 20}, {"on", "", 0}, {"7", "", 0}, {"3", "s", 0}} {
		require.Equal(t, c.want, bytesOf(c.raw, c.unit), "%s %s", c.raw, c.unit)
	}
}

func TestAdviseKernel(t *testing.T) {
	t.Parallel()
	proc := func(bytes, ratio string) func(string) ([]byte, error) {
		return func(path string) ([]byte, error) {
			switch path {
			case "/proc/sys/vm/dirty_background_bytes":
				return []byte(bytes + "\n"), nil
			case "/proc/sys/vm/dirty_background_ratio":
				return []byte(ratio + "\n"), nil
			}
			return nil, errors.New("no such file")
		}
	}
	require.Len(t, AdviseKernel(proc("0", "10"), 16<<30), 1, "10% of 16 GB may pile up")
	require.Empty(t, AdviseKernel(proc("67108864", "10"), 16<<30), "set")
	require.Empty(t, AdviseKernel(proc("0", "10"), 1<<30), "100 MB is small steps already")
	require.Empty(t, AdviseKernel(proc("0", "10"), 0), "memory unknown")
	require.Empty(t, AdviseKernel(func(string) ([]byte, error) { return nil, errors.New("not Linux") }, 16<<30))
}

func settingsOf(as []Advice) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Setting
	}
	return out
}

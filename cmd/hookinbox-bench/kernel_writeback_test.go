package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseVMStat(t *testing.T) {
	t.Parallel()
	text := "nr_free_pages 5000\nnr_dirty 25600\nnr_writeback 512\nnr_dirty_threshold 600000\npgpgin 10\npgpgout 2048000\n"
	k := parseVMStat(text, 4096)
	require.Equal(t, int64((25600+512)*4096), k.dirtyBytes, "dirty and under writeback, not the threshold")
	require.Equal(t, int64(2048000*1024), k.writtenBytes, "pgpgout counts KiB")

	require.Equal(t, kernelWriteback{}, parseVMStat("", 4096), "no /proc/vmstat: zeros")
}

func TestReadKernelWriteback(t *testing.T) {
	t.Parallel()
	k := readKernelWriteback()
	require.Positive(t, k.writtenBytes, "this machine has written to its disks since boot")
	require.GreaterOrEqual(t, k.dirtyBytes, int64(0))
}

func TestDescribeWriteback(t *testing.T) {
	t.Parallel()
	vm := map[string]string{"dirty_expire_centisecs": "3000", "dirty_background_ratio": "10", "dirty_background_bytes": "0"}
	require.Equal(t, "from 10% of memory or 30 s old", describeWriteback(func(n string) string { return vm[n] }))

	// Setting the bytes zeroes the ratio; the bytes win.
	vm["dirty_background_bytes"], vm["dirty_background_ratio"] = "67108864", "0"
	require.Equal(t, "from 64 MB dirty or 30 s old", describeWriteback(func(n string) string { return vm[n] }))

	require.Empty(t, describeWriteback(func(string) string { return "" }), "no /proc/sys/vm: nothing said")
}

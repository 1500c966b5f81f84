package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSlowSeconds(t *testing.T) {
	t.Parallel()
	s := steadyStep{Load: 0.5}
	s.WAL.Checkpoints = 3
	for i := range longStep - 1 {
		p99 := 20 * time.Millisecond
		switch i {
		case 7:
			p99 = 90 * time.Millisecond
		case 30:
			p99 = 26 * time.Millisecond
		case 31:
			p99 = 25 * time.Millisecond // not over the goal
		}
		s.Ingest.SecondP99 = append(s.Ingest.SecondP99, duration(p99))
	}
	require.Empty(t, slowSeconds(s), "a step shorter than longStep seconds")

	s.Ingest.SecondP99 = append(s.Ingest.SecondP99, duration(20*time.Millisecond))
	require.Equal(t, "held 60s: 2 seconds with an ack p99 over 25ms (@7s 90ms, @30s 26ms); 3 checkpoints", slowSeconds(s))
}

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFindWorstSecond(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	// answers makes 10 s of 100 answers a second over two workers, at
	// latency(second, i).
	answers := func(latency func(s, i int) time.Duration) []*tally {
		a, b := &tally{}, &tally{}
		for s := range 10 {
			for i := range 100 {
				t := a
				if i%2 == 1 {
					t = b
				}
				t.lat = append(t.lat, latency(s, i))
				t.due = append(t.due, start.Add(time.Duration(s)*time.Second+time.Duration(i)*10*time.Millisecond))
			}
		}
		return []*tally{a, b}
	}

	// A stall in the 7th second: 15 answers at 100 ms, the 990th of 1,000
	// among them (p99 100 ms). The one at 50 ms in the 2nd second is below
	// p99, and is the 891st of the other 900.
	w := findWorstSecond(start, answers(func(s, i int) time.Duration {
		switch {
		case s == 6 && i < 15:
			return 100 * time.Millisecond
		case s == 1 && i == 0:
			return 50 * time.Millisecond
		}
		return time.Millisecond
	}))
	require.Equal(t, &worstSecond{At: 6, Slow: 15, OfSlow: 15, P99Without: duration(time.Millisecond)}, w)

	// Every answer alike: all are at p99, each second holds a tenth, and
	// the first of them is named.
	w = findWorstSecond(start, answers(func(int, int) time.Duration { return 10 * time.Millisecond }))
	require.Equal(t, &worstSecond{At: 0, Slow: 100, OfSlow: 1000, P99Without: duration(10 * time.Millisecond)}, w)

	// A closed loop records no due times: nothing to tell apart.
	require.Nil(t, findWorstSecond(start, []*tally{{lat: []time.Duration{time.Millisecond}}}))
	require.Nil(t, findWorstSecond(start, []*tally{{}}))
}

func TestSecondP99s(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	// Three seconds over two workers: the first at 1 ms, none in the
	// second, the third at 1 ms but for two answers of a hundred at 80 ms
	// (the 99th by nearest rank is one of them; one alone would be the
	// 100th, above p99).
	a, b := &tally{}, &tally{}
	for i := range 100 {
		a.lat, a.due = append(a.lat, time.Millisecond), append(a.due, start.Add(time.Duration(i)*10*time.Millisecond))
		l := time.Millisecond
		if i == 42 || i == 43 {
			l = 80 * time.Millisecond
		}
		b.lat, b.due = append(b.lat, l), append(b.due, start.Add(2*time.Second+time.Duration(i)*10*time.Millisecond))
	}
	require.Equal(t, []duration{duration(time.Millisecond), 0, duration(80 * time.Millisecond)}, secondP99s(start, []*tally{a, b}))

	// A closed loop records no due times.
	require.Nil(t, secondP99s(start, []*tally{{lat: []time.Duration{time.Millisecond}}}))
}

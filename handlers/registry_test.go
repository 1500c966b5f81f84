package handlers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

func TestRegisterValidates(t *testing.T) {
	t.Parallel()
	noop := handlers.HandlerFunc(func(context.Context, *handlers.Event) error { return nil })
	r := handlers.NewRegistry(handlers.Config{})
	require.NoError(t, r.Register(handlers.Registration{Name: "a", Provider: "github", Events: []string{"push"}, Handler: noop}))
	for name, reg := range map[string]handlers.Registration{
		"duplicate name":      {Name: "a", Provider: "github", Events: []string{"push"}, Handler: noop},
		"no name":             {Provider: "github", Events: []string{"push"}, Handler: noop},
		"source and provider": {Name: "b", Source: "x", Provider: "github", Events: []string{"push"}, Handler: noop},
		"neither":             {Name: "b", Events: []string{"push"}, Handler: noop},
		"no events":           {Name: "b", Provider: "github", Handler: noop},
		"no handler":          {Name: "b", Provider: "github", Events: []string{"push"}},
	} {
		require.Error(t, r.Register(reg), name)
	}
	require.Equal(t, []string{"a"}, r.Names())
}

func TestMatchEvent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, eventType string
		want               bool
	}{
		{"*", "anything", true},
		{"issues", "issues", true},
		{"issues", "issue_comment", false},
		{"invoice.*", "invoice.paid", true},
		{"invoice.*", "invoice.payment.failed", true},
		{"invoice.*", "invoice", true},
		{"invoice.*", "invoices.paid", false},
		{"invoice.*", "invoice_paid", false},
		{"check_run.*", "check_run", true},
		{"invoice.paid", "invoice.paid.extra", false},
	} {
		require.Equal(t, tc.want, handlers.MatchEvent(tc.pattern, tc.eventType), "%q ~ %q", tc.pattern, tc.eventType)
	}
}

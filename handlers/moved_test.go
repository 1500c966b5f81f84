package handlers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/handlers/stripe"
)

// The deprecated copy of the saga's name derives the saga's keys.
func TestMovedSagaHandlerNameIsTheSagas(t *testing.T) {
	t.Parallel()
	require.Equal(t, stripe.SagaHandlerName, handlers.SagaHandlerName) //nolint:staticcheck // the deprecated copy under test
}

package handlertest_test

import (
	"testing"

	"github.com/hookinbox/hookinbox/handlers/handlertest"
)

func TestMain(m *testing.M) { handlertest.Main(m) }

// The package example's test, run: the example shows it, this proves it.
func TestNotifiesOnce(t *testing.T) {
	t.Parallel()
	testNotifiesOnce(t)
}

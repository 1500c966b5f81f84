package riverdb_test

import (
	"testing"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

package patcher_test

import (
	"os"
	"testing"

	"github.com/olmsync/olmsync/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

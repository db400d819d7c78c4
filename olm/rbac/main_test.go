package rbac_test

import (
	"os"
	"testing"

	"github.com/olmsync/olmsync/internal/testenv"
)

// TestMain stops the control plane TestEscalationIsTheAPIServers starts; without it every
// run of this package left a kube-apiserver and an etcd running.
func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

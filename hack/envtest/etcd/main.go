// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 so that the test
// control plane comes from the Go module proxy like everything else olmsync builds.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

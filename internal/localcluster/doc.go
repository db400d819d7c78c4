// Package localcluster runs a Kubernetes control plane of its own on loopback — the pinned
// etcd and kube-apiserver that `make envtest` builds, started through controller-runtime's
// envtest machinery — so that `olmsync run --local` can be tried on a laptop without a
// cluster. Unlike the test control plane (internal/testenv) its state outlives the
// process: etcd's data stays in a folder the caller names, and each start writes a fresh
// admin kubeconfig there for kubectl.
//
// It is a control plane only: no kubelet, no controller-manager, no scheduler. Nothing
// runs Pods, and nothing that a controller-manager does happens — no garbage collection
// of owned objects, no namespace deletion (a deleted namespace stays Terminating), no
// service-account tokens or default ServiceAccounts, no Deployment rollouts. olmsync's
// embedded OLM creates operator Deployments there; they never become Available.
//
// Importing it links envtest, whose port allocator creates a folder at program start
// (kubebuilder-envtest under the user's cache folder, else under $TMPDIR) and panics when
// neither is writable — in every command of a binary that imports it, not only in Start.
package localcluster

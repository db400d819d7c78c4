package preview

import "fmt"

// Kubeconfig names a live cluster whose state the preview reads: a kubeconfig file and a
// context in it. An empty Path loads kubeconfig files as kubectl does ($KUBECONFIG, else
// ~/.kube/config); an empty Context is the file's current context.
type Kubeconfig struct {
	Path    string
	Context string
}

// String names the cluster in errors: the file and the context, as the user gave them.
func (k Kubeconfig) String() string {
	file := k.Path
	if file == "" {
		file = "the default kubeconfig"
	} else {
		file = "kubeconfig " + file
	}
	if k.Context == "" {
		return file + " (current context)"
	}
	return fmt.Sprintf("%s (context %q)", file, k.Context)
}

// maxCustomResources bounds the custom resources read of one version of a CRD: OLM
// validates every one, but a check must end; past it (or when the user may not list
// them) the CRD is named in CustomResourcesCut and the preview says so.
const maxCustomResources = 2000

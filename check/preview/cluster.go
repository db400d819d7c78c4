package preview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/olmsync/olmsync/api/operators"
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/api/operators/v1alpha2"
	"github.com/olmsync/olmsync/internal/safeyaml"
	"github.com/olmsync/olmsync/olm/crdupgrade"
	"github.com/olmsync/olmsync/olm/extension"
	"github.com/olmsync/olmsync/olm/groups"
)

// ClusterState is what a cluster has, as far as OLM is concerned: its Namespaces (with
// their labels, which OperatorGroup selectors read), OperatorGroups (with the
// olm.providedAPIs OLM wrote on them), CSVs, Subscriptions (with status.installedCSV),
// CatalogSources (their priority, and whether the one a Subscription names exists), CRDs
// (with status.storedVersions) and the custom resources of their kinds (for OLM's CRD
// upgrade check), ServiceAccounts (an OperatorGroup's spec.serviceAccountName) and the RBAC
// objects (what that ServiceAccount may do in a scoped install). The zero value is an empty
// cluster.
type ClusterState struct {
	Namespaces     []corev1.Namespace
	OperatorGroups []operatorsv1.OperatorGroup
	CSVs           []v1alpha1.ClusterServiceVersion
	Subscriptions  []v1alpha1.Subscription
	CatalogSources []v1alpha1.CatalogSource
	// CatalogSourcesListed says that CatalogSources holds every CatalogSource of the
	// cluster, so that a Subscription naming another one is OLM's resolution failure: true
	// for a live cluster, and for a folder that holds at least one CatalogSource (a folder
	// without any may be a snapshot that left them out).
	CatalogSourcesListed bool
	// CRDs are the cluster's CustomResourceDefinitions, each with status.storedVersions.
	CRDs []apiextensionsv1.CustomResourceDefinition
	// CustomResources are the existing objects of the CRDs' kinds, which a new version of
	// their CRD must still accept.
	CustomResources []unstructured.Unstructured
	// CustomResourcesCut names the CRDs whose custom resources were read only in part: a
	// live cluster with more than maxCustomResources of a version, or whose user may not
	// list them.
	CustomResourcesCut []string
	// ServiceAccounts are the cluster's ServiceAccounts (those OperatorGroups name, from a
	// live cluster).
	ServiceAccounts []corev1.ServiceAccount
	// Roles, ClusterRoles, RoleBindings and ClusterRoleBindings decide what the ServiceAccount
	// of a scoped install may do (olm/rbac), as the API server decides it.
	Roles               []rbacv1.Role
	ClusterRoles        []rbacv1.ClusterRole
	RoleBindings        []rbacv1.RoleBinding
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
	// RBACUnread says why the RBAC objects of a live cluster could not be read (its user
	// may not list them): the preview then does not judge what a scoped install's account
	// may do, and says so.
	RBACUnread string
	// ClusterExtensions (with status.install.bundle, the bundle OLM v1 installed) and
	// ClusterCatalogs are OLM v1's (olm.operatorframework.io/v1).
	ClusterExtensions []extension.ClusterExtension
	ClusterCatalogs   []extension.ClusterCatalog
	// KubeVersion is the cluster's Kubernetes version (1.33.2) when known; CSVs whose
	// minKubeVersion is higher stay Pending with RequirementsNotMet.
	KubeVersion string
	// GlobalCatalogNamespace is the namespace whose CatalogSources every namespace sees,
	// as the cluster's OLM is configured (read from a live cluster; "" when unknown).
	GlobalCatalogNamespace string
}

// StateError is an object of a cluster state folder that could not be read.
type StateError struct {
	File string
	Line int
	Err  error
}

func (e *StateError) Error() string {
	return fmt.Sprintf("cluster state %s:%d: %v", e.File, e.Line, e.Err)
}

func (e *StateError) Unwrap() error { return e.Err }

// LoadClusterState reads a folder (or one file) of YAML or JSON manifests — what
// `kubectl get -o yaml` writes, Lists included — into a ClusterState; what `kubectl
// version -o yaml` writes gives the cluster's Kubernetes version. Besides Namespaces and
// OLM's kinds it keeps CustomResourceDefinitions, ServiceAccounts, and every object whose
// apiVersion and kind a CRD of the folder defines (its custom resources), and Roles,
// ClusterRoles, RoleBindings and ClusterRoleBindings (rbac.authorization.k8s.io/v1); other kinds are
// ignored. An object that cannot be read is an error naming its file and line: a snapshot
// that is silently incomplete would make the preview lie.
func LoadClusterState(root string) (*ClusterState, error) {
	st := &ClusterState{}
	defer st.keepCustomResources()
	var errs []error
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, doc := range splitDocuments(data) {
			if err := st.add(doc.data); err != nil {
				errs = append(errs, &StateError{File: p, Line: doc.line, Err: err})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read cluster state %s: %w", root, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return st, nil
}

// add reads one manifest into the state; a List adds each of its items.
func (st *ClusterState) add(doc []byte) error {
	if err := safeyaml.Check("", doc); err != nil {
		return err
	}
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return fmt.Errorf("parse manifest: %w", err)
	}
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
		// What `kubectl version -o yaml` writes: the cluster's Kubernetes version.
		ServerVersion *struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("parse manifest: %w", err)
	}
	switch {
	case head.Kind == "" && head.ServerVersion != nil:
		st.KubeVersion = strings.TrimPrefix(head.ServerVersion.GitVersion, "v")
		return nil
	case strings.HasSuffix(head.Kind, "List"):
		for i, item := range head.Items {
			if err := st.add(item); err != nil {
				return fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		return nil
	case head.APIVersion == "v1" && head.Kind == "Namespace":
		var ns corev1.Namespace
		if err := json.Unmarshal(data, &ns); err != nil {
			return fmt.Errorf("decode Namespace: %w", err)
		}
		st.Namespaces = append(st.Namespaces, ns)
		return nil
	case head.APIVersion == "v1" && head.Kind == "ServiceAccount":
		var sa corev1.ServiceAccount
		if err := json.Unmarshal(data, &sa); err != nil {
			return fmt.Errorf("decode ServiceAccount: %w", err)
		}
		st.ServiceAccounts = append(st.ServiceAccounts, sa)
		return nil
	case head.APIVersion == rbacv1.SchemeGroupVersion.String() && isRBACKind(head.Kind):
		return st.addRBAC(head.Kind, data)
	case strings.HasPrefix(head.APIVersion, apiextensionsv1.GroupName+"/") && head.Kind == "CustomResourceDefinition":
		crd, err := crdupgrade.Decode(data)
		if err != nil {
			return err
		}
		st.CRDs = append(st.CRDs, *crd)
		return nil
	case head.APIVersion == extension.APIVersion && (head.Kind == extension.KindClusterExtension || head.Kind == extension.KindClusterCatalog):
		d, err := extension.Decode(data)
		if err != nil {
			return err
		}
		if d.Extension != nil {
			st.ClusterExtensions = append(st.ClusterExtensions, *d.Extension)
		} else {
			st.ClusterCatalogs = append(st.ClusterCatalogs, *d.Catalog)
		}
		return nil
	case !strings.HasPrefix(head.APIVersion, operators.GroupName+"/"):
		// Perhaps a custom resource: which ones are is known once every CRD is read.
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(data); err == nil && u.GetKind() != "" {
			st.CustomResources = append(st.CustomResources, u)
		}
		return nil
	}
	obj, err := decodeOLM(data)
	if err != nil || obj == nil {
		return err
	}
	st.addObject(obj)
	return nil
}

// addObject adds a decoded OLM object; kinds the preview does not use are dropped.
func (st *ClusterState) addObject(obj any) {
	switch o := obj.(type) {
	case *operatorsv1.OperatorGroup:
		st.OperatorGroups = append(st.OperatorGroups, *o)
	case *v1alpha1.ClusterServiceVersion:
		st.CSVs = append(st.CSVs, *o)
	case *v1alpha1.Subscription:
		st.Subscriptions = append(st.Subscriptions, *o)
	case *v1alpha1.CatalogSource:
		st.CatalogSources = append(st.CatalogSources, *o)
		st.CatalogSourcesListed = true
	}
}

// keepCustomResources drops the objects read as possible custom resources that no CRD of
// the state defines (a Deployment, a ConfigMap of the snapshot).
func (st *ClusterState) keepCustomResources() {
	st.CustomResources = slices.DeleteFunc(st.CustomResources, func(u unstructured.Unstructured) bool {
		return st.crdOf(u.GroupVersionKind()) == nil
	})
}

// crdOf is the CRD of the state that defines gvk at one of its versions.
func (st *ClusterState) crdOf(gvk schema.GroupVersionKind) *apiextensionsv1.CustomResourceDefinition {
	for i := range st.CRDs {
		c := &st.CRDs[i]
		if c.Spec.Group == gvk.Group && c.Spec.Names.Kind == gvk.Kind &&
			slices.ContainsFunc(c.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == gvk.Version }) {
			return c
		}
	}
	return nil
}

// CRD is the state's CRD of that name, or nil.
func (st *ClusterState) CRD(name string) *apiextensionsv1.CustomResourceDefinition {
	for i := range st.CRDs {
		if st.CRDs[i].Name == name {
			return &st.CRDs[i]
		}
	}
	return nil
}

// CustomResourcesOf are the state's custom resources of a CRD, of any of its versions.
func (st *ClusterState) CustomResourcesOf(crd *apiextensionsv1.CustomResourceDefinition) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, u := range st.CustomResources {
		gvk := u.GroupVersionKind()
		if gvk.Group == crd.Spec.Group && gvk.Kind == crd.Spec.Names.Kind {
			out = append(out, u)
		}
	}
	return out
}

// decodeOLM decodes an operators.coreos.com manifest with the API types, an OperatorGroup
// of v1alpha2 converted to v1. Fields the types do not know are ignored here: the
// placement rules and the API server report them on objects in Git.
func decodeOLM(data []byte) (any, error) {
	d, err := operators.Decode(data)
	if errors.Is(err, operators.ErrNotOLMKind) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if og, ok := d.Object.(*v1alpha2.OperatorGroup); ok {
		return groups.FromV1alpha2(og), nil
	}
	return d.Object, nil
}

// document is one YAML document of a file and the line it starts on.
type document struct {
	data []byte
	line int
}

// splitDocuments splits a YAML stream on its "---" lines, keeping where each document
// starts. Documents holding nothing (comments, blank lines) are dropped.
func splitDocuments(data []byte) []document {
	var out []document
	var cur bytes.Buffer
	start, n := 1, 0
	flush := func(next int) {
		if len(bytes.TrimSpace(stripComments(cur.Bytes()))) > 0 {
			out = append(out, document{data: slices.Clone(cur.Bytes()), line: start})
		}
		cur.Reset()
		start = next
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "---" || strings.HasPrefix(line, "--- ") {
			flush(n + 1)
			continue
		}
		if cur.Len() == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			start = n + 1
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush(n + 1)
	return out
}

func stripComments(b []byte) []byte {
	var out []byte
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, t...)
		}
	}
	return out
}

func isRBACKind(kind string) bool {
	switch kind {
	case "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
		return true
	}
	return false
}

// addRBAC decodes one RBAC object into the state.
func (st *ClusterState) addRBAC(kind string, data []byte) error {
	var err error
	switch kind {
	case "Role":
		var o rbacv1.Role
		if err = json.Unmarshal(data, &o); err == nil {
			st.Roles = append(st.Roles, o)
		}
	case "ClusterRole":
		var o rbacv1.ClusterRole
		if err = json.Unmarshal(data, &o); err == nil {
			st.ClusterRoles = append(st.ClusterRoles, o)
		}
	case "RoleBinding":
		var o rbacv1.RoleBinding
		if err = json.Unmarshal(data, &o); err == nil {
			st.RoleBindings = append(st.RoleBindings, o)
		}
	case "ClusterRoleBinding":
		var o rbacv1.ClusterRoleBinding
		if err = json.Unmarshal(data, &o); err == nil {
			st.ClusterRoleBindings = append(st.ClusterRoleBindings, o)
		}
	}
	if err != nil {
		return fmt.Errorf("decode %s: %w", kind, err)
	}
	return nil
}

package groups_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/olmsync/olmsync/api/operators"
	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/api/operators/v1alpha2"
	"github.com/olmsync/olmsync/olm/groups"
)

// Small builders for the fixtures of the tests: og("ns", "name", targets("a", "b")),
// csv("ns", "name", ownsCRD(...), modes(...)).

type ogOpt func(*operatorsv1.OperatorGroup)

func og(namespace, name string, opts ...ogOpt) operatorsv1.OperatorGroup {
	g := operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	for _, o := range opts {
		o(&g)
	}
	return g
}

// targets sets the group's resolved status.namespaces.
func targets(namespaces ...string) ogOpt {
	return func(g *operatorsv1.OperatorGroup) { g.Status.Namespaces = namespaces }
}

// global makes the group's status all namespaces.
func global() ogOpt { return targets("") }

// specTargets sets spec.targetNamespaces.
func specTargets(namespaces ...string) ogOpt {
	return func(g *operatorsv1.OperatorGroup) { g.Spec.TargetNamespaces = namespaces }
}

// matchLabels sets spec.selector.matchLabels.
func matchLabels(kv ...string) ogOpt {
	return func(g *operatorsv1.OperatorGroup) {
		g.Spec.Selector = &metav1.LabelSelector{MatchLabels: pairs(kv...)}
	}
}

// provides sets the olm.providedAPIs annotation.
func provides(value string) ogOpt {
	return func(g *operatorsv1.OperatorGroup) {
		if g.Annotations == nil {
			g.Annotations = map[string]string{}
		}
		g.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey] = value
	}
}

func static() ogOpt {
	return func(g *operatorsv1.OperatorGroup) { g.Spec.StaticProvidedAPIs = true }
}

type csvOpt func(*v1alpha1.ClusterServiceVersion)

func csv(namespace, name string, opts ...csvOpt) *v1alpha1.ClusterServiceVersion {
	c := &v1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func ownsCRD(name, version, kind string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Spec.CustomResourceDefinitions.Owned = append(c.Spec.CustomResourceDefinitions.Owned,
			v1alpha1.CRDDescription{Name: name, Version: version, Kind: kind})
	}
}

func ownsAPIService(group, version, kind, plural string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Spec.APIServiceDefinitions.Owned = append(c.Spec.APIServiceDefinitions.Owned,
			v1alpha1.APIServiceDescription{Name: plural, Group: group, Version: version, Kind: kind})
	}
}

// supports lists the install modes the CSV supports; the others are listed as unsupported.
func supports(types ...v1alpha1.InstallModeType) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Spec.InstallModes = nil
		for _, t := range []v1alpha1.InstallModeType{
			v1alpha1.InstallModeTypeOwnNamespace, v1alpha1.InstallModeTypeSingleNamespace,
			v1alpha1.InstallModeTypeMultiNamespace, v1alpha1.InstallModeTypeAllNamespaces,
		} {
			c.Spec.InstallModes = append(c.Spec.InstallModes, v1alpha1.InstallMode{Type: t, Supported: slices.Contains(types, t)})
		}
	}
}

// installModes sets spec.installModes exactly as given.
func installModes(modes ...v1alpha1.InstallMode) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) { c.Spec.InstallModes = modes }
}

func status(phase v1alpha1.ClusterServiceVersionPhase, reason v1alpha1.ConditionReason) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) {
		c.Status.Phase, c.Status.Reason = phase, reason
	}
}

func annotations(kv ...string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) { c.Annotations = pairs(kv...) }
}

func labels(kv ...string) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) { c.Labels = pairs(kv...) }
}

func permissions(perms ...v1alpha1.StrategyDeploymentPermissions) csvOpt {
	return func(c *v1alpha1.ClusterServiceVersion) { c.Spec.InstallStrategy.StrategySpec.Permissions = perms }
}

var (
	allModes    = []v1alpha1.InstallModeType{v1alpha1.InstallModeTypeOwnNamespace, v1alpha1.InstallModeTypeSingleNamespace, v1alpha1.InstallModeTypeMultiNamespace, v1alpha1.InstallModeTypeAllNamespaces}
	everyMode   = supports(allModes...)
	etcdCluster = ownsCRD("etcdclusters.etcd.database.coreos.com", "v1beta2", "EtcdCluster")
)

func namespace(name string, kv ...string) corev1.Namespace {
	return corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: pairs(kv...)}}
}

func pairs(kv ...string) map[string]string {
	if len(kv) == 0 {
		return nil
	}
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// decodeGroup reads a real OperatorGroup manifest (v1 or v1alpha2) into the v1 type.
func decodeGroup(t *testing.T, path string) (*operatorsv1.OperatorGroup, *operators.Decoded) {
	t.Helper()
	d := decodeFile(t, path)
	switch g := d.Object.(type) {
	case *operatorsv1.OperatorGroup:
		return g, d
	case *v1alpha2.OperatorGroup:
		return groups.FromV1alpha2(g), d
	}
	t.Fatalf("%s: %s is not an OperatorGroup", path, d.GVK)
	return nil, nil
}

// decodeCSV reads a real ClusterServiceVersion manifest.
func decodeCSV(t *testing.T, path string) *v1alpha1.ClusterServiceVersion {
	t.Helper()
	d := decodeFile(t, path)
	c, ok := d.Object.(*v1alpha1.ClusterServiceVersion)
	if !ok {
		t.Fatalf("%s: %s is not a ClusterServiceVersion", path, d.GVK)
	}
	return c
}

func decodeFile(t *testing.T, path string) *operators.Decoded {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := operators.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return d
}

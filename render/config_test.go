package render

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/internal/safeyaml/yamltest"
)

func TestParseConfigFull(t *testing.T) {
	data := `
apiVersion: olmsync.dev/v1alpha1
kind: Config
repoURLs: [https://github.com/org/apps]
apps:
- name: cluster-scope
  path: cluster-scope/overlays/prod/emea/cl1
  cluster: cl1
  clusterScope: true
- name: team-a
  path: apps/team-a/
  namespace: team-a
  cluster: cl1
  recurse: true
policy:
  rules: [policy/]
  marketplaceNamespace: marketplace
  globalOperatorsNamespace: operators
  operatorGroups:
  - {namespace: operators, name: global, global: true}
  - {namespace: tools, name: tools, targetNamespaces: [tools], cluster: cl1}
  metaOperators: [opendatahub-operator]
waivers:
- rule: OP006
  object: {kind: Subscription, namespace: ns, name: sub}
  reason: reviewed by platform team (PLAT-123)
  expires: 2026-12-31
catalogs:
- {name: community-operators, namespace: openshift-marketplace, source: catalogs/community}
discovery:
  clusterPaths: ["envs/*/{cluster}"]
`
	got, err := ParseConfig("olmsync.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	want := &Config{
		APIVersion: ConfigAPIVersion, Kind: ConfigKind,
		RepoURLs: []string{"https://github.com/org/apps"},
		Apps: []ConfigApp{
			{Name: "cluster-scope", Path: "cluster-scope/overlays/prod/emea/cl1", Cluster: "cl1", ClusterScope: &yes},
			{Name: "team-a", Path: "apps/team-a/", Namespace: "team-a", Cluster: "cl1", Recurse: true},
		},
		Policy: PolicyConfig{
			Rules:                    []string{"policy/"},
			MarketplaceNamespace:     "marketplace",
			GlobalOperatorsNamespace: "operators",
			OperatorGroups: []ExternalOperatorGroup{
				{Namespace: "operators", Name: "global", Global: true},
				{Namespace: "tools", Name: "tools", TargetNamespaces: []string{"tools"}, Cluster: "cl1"},
			},
			MetaOperators: []string{"opendatahub-operator"},
		},
		Waivers: []Waiver{{
			Rule:    "OP006",
			Object:  WaiverObject{Kind: "Subscription", Namespace: "ns", Name: "sub"},
			Reason:  "reviewed by platform team (PLAT-123)",
			Expires: &Date{time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)},
			Line:    24,
		}},
		Catalogs:  []Catalog{{Name: "community-operators", Namespace: "openshift-marketplace", Source: "catalogs/community", Line: 29}},
		Discovery: DiscoveryConfig{ClusterPaths: []string{"envs/*/{cluster}"}, BaseFolders: []string{"base", "bases"}, ClusterPathsGiven: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

func TestParseConfigDefaults(t *testing.T) {
	defaultGroup := []ExternalOperatorGroup{{Namespace: "openshift-operators", Name: "global-operators", Global: true}}
	tests := []struct {
		name       string
		data       string
		wantGroups []ExternalOperatorGroup
		wantMarket string
	}{
		{"empty file", "", defaultGroup, "openshift-marketplace"},
		{"only comments", "# nothing yet\n", defaultGroup, "openshift-marketplace"},
		{"policy without groups", "policy:\n  marketplaceNamespace: m\n", defaultGroup, "m"},
		{"explicitly no groups", "policy:\n  operatorGroups: []\n", []ExternalOperatorGroup{}, "openshift-marketplace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig("olmsync.yaml", []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantGroups, c.Policy.OperatorGroups); diff != "" {
				t.Errorf("operatorGroups (-want +got):\n%s", diff)
			}
			if c.Policy.MarketplaceNamespace != tt.wantMarket {
				t.Errorf("marketplaceNamespace = %q, want %q", c.Policy.MarketplaceNamespace, tt.wantMarket)
			}
			if c.Policy.GlobalOperatorsNamespace != DefaultGlobalOperatorsNamespace {
				t.Errorf("globalOperatorsNamespace = %q", c.Policy.GlobalOperatorsNamespace)
			}
		})
	}
	if diff := cmp.Diff(defaultGroup, DefaultConfig().Policy.OperatorGroups); diff != "" {
		t.Errorf("DefaultConfig operatorGroups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(DiscoveryConfig{ClusterPaths: DefaultClusterPaths, BaseFolders: DefaultBaseFolders}, DefaultConfig().Discovery); diff != "" {
		t.Errorf("DefaultConfig discovery (-want +got):\n%s", diff)
	}
	off, err := ParseConfig("olmsync.yaml", []byte("discovery:\n  clusterPaths: []\n  baseFolders: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DiscoveryConfig{ClusterPaths: []string{}, BaseFolders: []string{}, ClusterPathsGiven: true}, off.Discovery); diff != "" {
		t.Errorf("discovery turned off (-want +got):\n%s", diff)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantLine int
		wantMsg  string
	}{
		{"malformed YAML", "apps:\n- name: a\n  path: [x\n", 3, "did not find expected"},
		{"bad indentation", "policy:\n  rules: [a]\n    marketplaceNamespace: x\n", 3, "did not find expected key"},
		{"mapping in a scalar", "a: 1\n  b: 2\n", 2, "mapping values are not allowed"},
		{"sequence item among keys", "apps:\n  - name: a\n  path: b\n", 3, "did not find expected '-' indicator"},
		{"unknown top-level field", "apiVersion: olmsync.dev/v1alpha1\nappz: []\n", 2, `unknown field "appz"`},
		{"unknown nested field", "apps:\n- name: a\n  path: a\n- name: b\n  pth: b\n", 5, `unknown field "pth" in apps[1]`},
		{"unknown waiver object field", "waivers:\n- rule: OP1\n  object: {kind: K, nam: n}\n  reason: r\n", 3, `unknown field "nam" in waivers[0].object`},
		{"duplicate key", "policy:\n  marketplaceNamespace: a\n  marketplaceNamespace: b\n", 3, `mapping key "marketplaceNamespace" already defined at line 2`},
		{"wrong type", "apps:\n- name: a\n  path: a\n  clusterScope: maybe\n", 4, "cannot unmarshal"},
		{"list expected", "apps: cluster-scope\n", 1, "cannot unmarshal"},
		{"bad date", "waivers:\n- rule: OP1\n  object: {kind: K, name: n}\n  reason: r\n  expires: next week\n", 5, `date "next week" is not YYYY-MM-DD`},
		{"wrong apiVersion", "apiVersion: v1\n", 1, `apiVersion "v1"`},
		{"wrong kind", "kind: ConfigMap\n", 1, `kind "ConfigMap"`},
		{"two documents", "apps: []\n---\npolicy: {}\n", 3, "one YAML document"},
		{"not a mapping", "- a\n- b\n", 1, "must be a mapping"},
		{"empty apps", "apps: []\n", 1, "apps is empty"},
		{"app without name", "apps:\n- path: a\n", 2, "name is required"},
		{"app without path", "apps:\n- name: a\n", 2, "path is required"},
		{"app path escapes", "apps:\n- name: a\n  path: ../other\n", 2, "leads outside the repository"},
		{"app path absolute", "apps:\n- name: a\n  path: /etc\n", 2, "must be relative"},
		{"duplicate app", "apps:\n- name: a\n  path: a\n- name: a\n  path: b\n", 4, `app name "a" is used twice in cluster (default) (first at line 2)`},
		{"rules path escapes", "policy:\n  rules: [ok, ../../x]\n", 2, "policy.rules[1]"},
		{"group without name", "policy:\n  operatorGroups:\n  - namespace: ns\n", 3, "namespace and name are required"},
		{"global group with targets", "policy:\n  operatorGroups:\n  - {namespace: a, name: b, global: true, targetNamespaces: [c]}\n", 3, "a global group has no targetNamespaces"},
		{"waiver without reason", "waivers:\n- rule: OP006\n  object: {kind: Subscription, name: s}\n", 2, "reason is required"},
		{"waiver without object", "waivers:\n- rule: OP006\n  reason: ok\n", 2, "object.kind and object.name are required"},
		{"catalog without source", "catalogs:\n- {name: c, namespace: n}\n", 2, "name and source are required"},
		{"cluster path without cluster", "discovery:\n  clusterPaths:\n  - clusters/*\n", 3, `discovery.clusterPaths[0] "clusters/*": a pattern names the cluster exactly once`},
		{"cluster path twice", "discovery:\n  clusterPaths: [\"a/{cluster}/{cluster}\"]\n", 2, "exactly once"},
		{"cluster path glob in a name", "discovery:\n  clusterPaths: [\"a*/{cluster}\"]\n", 2, `a folder name is a name, "*", "**" or "{cluster}"`},
		{"cluster path absolute", "discovery:\n  clusterPaths: [\"/{cluster}\"]\n", 2, "relative to the repository root"},
		{"base folder with a slash", "discovery:\n  baseFolders: [a/base]\n", 2, `discovery.baseFolders[0] "a/base"`},
		{"billion laughs", yamltest.Laughs(9), 9, "document contains excessive aliasing"},
		{"anchor containing itself", "waivers: &w\n- *w\n", 1, "anchor 'w' value contains itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("olmsync.yaml", []byte(tt.data))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v (%T), want a *ConfigError", err, err)
			}
			if ce.File != "olmsync.yaml" || ce.Line != tt.wantLine {
				t.Errorf("error at %s:%d, want olmsync.yaml:%d (%v)", ce.File, ce.Line, tt.wantLine, err)
			}
			if !strings.Contains(ce.Msg, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", ce.Msg, tt.wantMsg)
			}
			if !strings.HasPrefix(err.Error(), "olmsync.yaml:") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestDateExpired(t *testing.T) {
	d := Date{time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}
	tests := []struct {
		now  time.Time
		want bool
	}{
		{time.Date(2026, 12, 30, 12, 0, 0, 0, time.UTC), false},
		{time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), false},
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), true},
	}
	for _, tt := range tests {
		if got := d.Expired(tt.now); got != tt.want {
			t.Errorf("Expired(%v) = %t, want %t", tt.now, got, tt.want)
		}
	}
	if d.String() != "2026-12-31" {
		t.Errorf("String() = %q", d.String())
	}
}

func TestLoadConfigAbsent(t *testing.T) {
	fsys, root := memRepo(t, files{"a/x.yaml": "a: b\n"})
	c, err := LoadConfig(fsys, root)
	if err != nil || c != nil {
		t.Fatalf("LoadConfig without olmsync.yaml = %v, %v; want nil, nil", c, err)
	}
}

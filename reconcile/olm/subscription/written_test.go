package subscription_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/olmsync/olmsync/reconcile/olm/subscription"
)

func TestBehind(t *testing.T) {
	sub := func(name, rv string) subscription.Write {
		return subscription.Write{Kind: "Subscription", Name: name, ResourceVersion: rv}
	}
	plan := func(name, rv string) subscription.Write {
		return subscription.Write{Kind: "InstallPlan", Name: name, ResourceVersion: rv}
	}
	view := map[string]map[string]string{
		"Subscription": {"a": "100", "b": "99"},
		"InstallPlan":  {"install-1": "1000"},
	}
	tests := map[string]struct {
		writes []subscription.Write
		want   subscription.CacheLag
	}{
		"nothing written": {},
		"shown at the version written": {
			writes: []subscription.Write{sub("a", "100"), plan("install-1", "1000")},
			want:   subscription.CacheLag{Shown: []subscription.Write{sub("a", "100"), plan("install-1", "1000")}},
		},
		"shown at a newer version (compared as numbers, not strings)": {
			writes: []subscription.Write{sub("b", "98"), plan("install-1", "999")},
			want:   subscription.CacheLag{Shown: []subscription.Write{sub("b", "98"), plan("install-1", "999")}},
		},
		"held at an older version": {
			writes: []subscription.Write{sub("a", "101"), sub("b", "100")},
			want:   subscription.CacheLag{Older: []subscription.Write{sub("a", "101"), sub("b", "100")}},
		},
		"not held: a plan just created, a Subscription of another kind's name": {
			writes: []subscription.Write{plan("install-2", "1001"), sub("install-1", "5")},
			want:   subscription.CacheLag{Missing: []subscription.Write{plan("install-2", "1001"), sub("install-1", "5")}},
		},
		"a resourceVersion that is no number waits for nothing": {
			writes: []subscription.Write{sub("a", "x7")},
			want:   subscription.CacheLag{Shown: []subscription.Write{sub("a", "x7")}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, subscription.Behind(tc.writes, view)); diff != "" {
				t.Errorf("Behind (-want +got):\n%s", diff)
			}
		})
	}
}

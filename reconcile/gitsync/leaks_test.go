package gitsync

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
	"github.com/olmsync/olmsync/internal/gittest"
	"github.com/olmsync/olmsync/reconcile/metrics"
)

// notes records the Events a reconciler makes, as the API server would store them.
type notes struct {
	mu  sync.Mutex
	all []string
}

func (n *notes) Eventf(_ runtime.Object, _ runtime.Object, eventType, reason, action, note string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all = append(n.all, fmt.Sprintf("%s %s %s: %s", eventType, reason, action, fmt.Sprintf(note, args...)))
}

// TestURLSecretsNeverShownByTheReconciler (issue 30): the Sync CRD now refuses a URL with a
// password, http(s) userinfo or a token in its query, but Syncs created before it may hold
// one, and a query value under another name (?code=) still passes it. Each such URL goes
// through the reconciler's fetch step, Ready, the Event of its change, the log (debug
// level, the error controller-runtime logs included) and the metrics; none of them holds
// the secret, and each says what failed with the URL redacted.
func TestURLSecretsNeverShownByTheReconciler(t *testing.T) {
	const secret = "S3CRETt0ken42"
	up := gittest.NewUpstream(t, map[string]string{"olmsync.yaml": "apps: []\n"})
	srv := gittest.Serve(t, up, gittest.ServerOptions{})
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct{ url, says string }{
		{srv.RepoURL() + "?private_token=" + secret, "?***"},
		{srv.RepoURL() + "?code=" + secret, "?***"},
		{srv.RepoURL() + "?x=1&access_token=" + secret, "?***"},
		{"http://oauth2:" + secret + "@" + host + "/project.git", "spec.source.url http://" + host + "/project.git carries credentials"},
		{"https://" + secret + "@" + host + "/project.git", "spec.source.url https://" + host + "/project.git carries credentials"},
		{"ssh://git:" + secret + "@127.0.0.1:1/project.git", "ssh://git@127.0.0.1:1/project.git"},
		{"alice:" + secret + "@127.0.0.1:project.git", "alice:***@127.0.0.1"},
		{"https://host.invalid/r.git?private_token=" + secret, "https://host.invalid/r.git?***"},
	} {
		t.Run(strings.ReplaceAll(tc.url, secret, "SECRET"), func(t *testing.T) {
			var logs strings.Builder
			var mu sync.Mutex
			logger := funcr.New(func(prefix, args string) {
				mu.Lock()
				defer mu.Unlock()
				logs.WriteString(prefix + " " + args + "\n")
			}, funcr.Options{Verbosity: 1})
			ctx := log.IntoContext(context.Background(), logger)
			events := &notes{}
			reg := prometheus.NewRegistry()
			r := &Reconciler{Recorder: events, Metrics: metrics.NewRecorder().MustRegister(reg),
				Options: Options{CacheDir: t.TempDir(), RetryInterval: time.Second}}
			obj := &olmsyncv1alpha1.Sync{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "leaky", Generation: 1},
				Spec: olmsyncv1alpha1.SyncSpec{Source: olmsyncv1alpha1.GitSource{URL: tc.url, Interval: metav1.Duration{Duration: time.Minute}},
					Interval: metav1.Duration{Duration: time.Minute}},
			}
			fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			p := &pass{}
			err := r.run(fctx, obj, p, []step{r.fetch})
			_, err = r.result(fctx, obj, p, err)
			if err != nil {
				logger.Error(err, "Reconciler error") // as controller-runtime logs what Reconcile returns
			}
			r.event(obj, nil)
			r.Metrics.RecordReconcile(obj, time.Now())

			ready := conditions.Get(obj, olmsyncv1alpha1.ReadyCondition)
			if ready == nil || ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, tc.says) {
				t.Fatalf("Ready %+v, want False naming the URL as %q", ready, tc.says)
			}
			status, _ := json.Marshal(obj.Status)
			families, _ := reg.Gather()
			var exposed strings.Builder
			for _, f := range families {
				_, _ = expfmt.MetricFamilyToText(&exposed, f)
			}
			if !strings.Contains(exposed.String(), "gotk_resource_info") {
				t.Fatal("no gotk_resource_info series: the metrics were not recorded")
			}
			mu.Lock()
			defer mu.Unlock()
			for what, text := range map[string]string{"the status": string(status), "the Events": strings.Join(events.all, "\n"),
				"the log": logs.String(), "the metrics": exposed.String()} {
				if strings.Contains(text, secret) {
					t.Errorf("%s holds the secret:\n%s", what, text)
				}
			}
			if len(events.all) == 0 {
				t.Error("no Event of the failure")
			}
		})
	}
}

package report

import (
	"fmt"
	"io"
	"testing"
)

// BenchmarkWrite writes a report of 5,000 violations (a first check of a 300-app
// repository with every object wrong) in each format.
func BenchmarkWrite(b *testing.B) {
	r := bigReport(b, 5000)
	for _, f := range Formats() {
		b.Run(string(f), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Write(io.Discard, r, f, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMarkAgainstBase(b *testing.B) {
	head := bigReport(b, 5000).Violations
	base := head[:4000]
	b.ReportAllocs()
	for b.Loop() {
		MarkAgainstBase(head, base)
	}
}

// BenchmarkDiffObjects compares two revisions of 5,000 Subscriptions, one in ten changed.
func BenchmarkDiffObjects(b *testing.B) {
	sub := func(i int, channel string) Manifest {
		return Manifest{Cluster: "c1", App: fmt.Sprintf("app-%d", i%300), File: fmt.Sprintf("apps/%d/sub.yaml", i), Line: 1, Object: map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
			"metadata": map[string]any{"name": fmt.Sprintf("sub-%d", i), "namespace": fmt.Sprintf("ns-%d", i)},
			"spec":     map[string]any{"channel": channel, "name": "etcd", "source": "community-operators", "sourceNamespace": "openshift-marketplace"},
		}}
	}
	var base, head []Manifest
	for i := range 5000 {
		base = append(base, sub(i, "stable"))
		channel := "stable"
		if i%10 == 0 {
			channel = "fast"
		}
		head = append(head, sub(i, channel))
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(DiffObjects(base, head)); n != 500 {
			b.Fatalf("%d changes, want 500", n)
		}
	}
}

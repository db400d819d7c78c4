package phase

import (
	"slices"
	"strings"

	v1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	"github.com/olmsync/olmsync/olm/groups"
)

// Replacement is where a CSV stands in the replacement chain of its namespace.
type Replacement struct {
	// Replaces is the CSV its spec.replaces names, when that exists in the namespace.
	Replaces *v1alpha1.ClusterServiceVersion
	// ReplacedBy is a CSV whose spec.replaces names it (the first by name when several do).
	ReplacedBy *v1alpha1.ClusterServiceVersion
	// Newest is the last CSV of the chain that starts at ReplacedBy.
	Newest *v1alpha1.ClusterServiceVersion
}

// ReplacementOf finds a CSV's neighbours in the replacement chain among the CSVs of its
// namespace (csvs may hold others; they are skipped, as are copies, and a CSV never replaces
// itself), as OLM's ReplaceFinder does.
func ReplacementOf(csv *v1alpha1.ClusterServiceVersion, csvs []v1alpha1.ClusterServiceVersion) Replacement {
	local := localCSVs(csv.Namespace, csvs)
	var r Replacement
	if name := csv.Spec.Replaces; name != "" && name != csv.Name {
		r.Replaces = local[name]
	}
	r.ReplacedBy = replacerOf(csv.Name, local)
	seen := map[string]bool{csv.Name: true}
	for next := r.ReplacedBy; next != nil && !seen[next.Name]; next = replacerOf(next.Name, local) {
		seen[next.Name] = true
		r.Newest = next
	}
	return r
}

// localCSVs returns the non-copied CSVs of namespace by name.
func localCSVs(namespace string, csvs []v1alpha1.ClusterServiceVersion) map[string]*v1alpha1.ClusterServiceVersion {
	out := map[string]*v1alpha1.ClusterServiceVersion{}
	for i := range csvs {
		if csvs[i].Namespace == namespace && !groups.IsCopied(&csvs[i]) {
			out[csvs[i].Name] = &csvs[i]
		}
	}
	return out
}

// replacerOf returns the CSV (first by name) whose spec.replaces is name, itself excluded.
func replacerOf(name string, local map[string]*v1alpha1.ClusterServiceVersion) *v1alpha1.ClusterServiceVersion {
	var found *v1alpha1.ClusterServiceVersion
	for _, c := range local {
		if c.Name != name && c.Spec.Replaces == name && (found == nil || strings.Compare(c.Name, found.Name) < 0) {
			found = c
		}
	}
	return found
}

// ReplacementChain returns the names of the CSVs linked to csv by spec.replaces, both ways,
// csv included: everything it replaces, directly or not, and everything that replaces it.
func ReplacementChain(csv *v1alpha1.ClusterServiceVersion, csvs []v1alpha1.ClusterServiceVersion) map[string]bool {
	local := localCSVs(csv.Namespace, csvs)
	chain := map[string]bool{csv.Name: true}
	for next := replacerOf(csv.Name, local); next != nil && !chain[next.Name]; next = replacerOf(next.Name, local) {
		chain[next.Name] = true
	}
	for prev := csv.Spec.Replaces; prev != "" && !chain[prev]; {
		c, ok := local[prev]
		if !ok {
			break
		}
		chain[prev] = true
		prev = c.Spec.Replaces
	}
	return chain
}

// OwnerConflicts returns, sorted, the CSVs of the namespace outside csv's replacement chain
// that own a CRD csv owns: OLM fails csv with OwnerConflict when there is any.
func OwnerConflicts(csv *v1alpha1.ClusterServiceVersion, csvs []v1alpha1.ClusterServiceVersion) []string {
	chain := ReplacementChain(csv, csvs)
	mine := map[string]bool{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		mine[d.Name] = true
	}
	var out []string
	for name, other := range localCSVs(csv.Namespace, csvs) {
		if chain[name] {
			continue
		}
		if slices.ContainsFunc(other.Spec.CustomResourceDefinitions.Owned, func(d v1alpha1.CRDDescription) bool { return mine[d.Name] }) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

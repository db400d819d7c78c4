package resolve

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/olmsync/olmsync/olm/catalog"
	"github.com/olmsync/olmsync/olm/semverrange"
)

// A predicate is one dependency of a bundle: what a bundle must be to satisfy it. String is
// OLM's wording, so that "bundle <csv> requires an operator <predicate>" reads as OLM's
// solver explanation does.
type predicate interface {
	test(e *entry) bool
	String() string
	// gvk is the API a provider must serve when the predicate is just that (it lets the
	// index find candidates without scanning every bundle); nil otherwise.
	gvk() *catalog.GVK
	// pkg is the package a candidate must belong to when the predicate says so; "" otherwise.
	pkgName() string
}

type gvkPredicate struct{ api catalog.GVK }

func (p gvkPredicate) test(e *entry) bool { return slices.Contains(e.provides, p.api) }
func (p gvkPredicate) gvk() *catalog.GVK  { return &p.api }
func (p gvkPredicate) pkgName() string    { return "" }
func (p gvkPredicate) String() string {
	return fmt.Sprintf("providing an API with group: %s, version: %s, kind: %s", p.api.Group, p.api.Version, p.api.Kind)
}

type packagePredicate struct {
	pkg       string
	rng       semver.Range
	rangeText string
}

func (p packagePredicate) test(e *entry) bool {
	return e.pkg == p.pkg && e.version != nil && p.rng(*e.version)
}
func (p packagePredicate) gvk() *catalog.GVK { return nil }
func (p packagePredicate) pkgName() string   { return p.pkg }
func (p packagePredicate) String() string {
	return fmt.Sprintf("with package: %s and with version in range: %s", p.pkg, p.rangeText)
}

type labelPredicate struct{ label string }

func (p labelPredicate) test(e *entry) bool { return slices.Contains(e.labels, p.label) }
func (p labelPredicate) gvk() *catalog.GVK  { return nil }
func (p labelPredicate) pkgName() string    { return "" }
func (p labelPredicate) String() string     { return "with label: " + p.label }

// compoundPredicate is an olm.constraint's all, any or not.
type compoundPredicate struct {
	op    string // "all", "any", "none"
	preds []predicate
}

func (p compoundPredicate) test(e *entry) bool {
	switch p.op {
	case "all":
		for _, q := range p.preds {
			if !q.test(e) {
				return false
			}
		}
		return true
	case "any":
		return slices.ContainsFunc(p.preds, func(q predicate) bool { return q.test(e) })
	default: // none
		return !slices.ContainsFunc(p.preds, func(q predicate) bool { return q.test(e) })
	}
}
func (p compoundPredicate) gvk() *catalog.GVK { return nil }
func (p compoundPredicate) pkgName() string   { return "" }
func (p compoundPredicate) String() string {
	parts := make([]string, len(p.preds))
	for i, q := range p.preds {
		parts[i] = q.String()
	}
	switch p.op {
	case "all":
		return "with all of: " + strings.Join(parts, " and ")
	case "any":
		return "with any of: " + strings.Join(parts, " or ")
	default:
		return "with none of: " + strings.Join(parts, " or ")
	}
}

// messagePredicate is an olm.constraint with a failureMessage: the author's words explain
// it.
type messagePredicate struct {
	predicate
	message string
}

func (p messagePredicate) String() string { return p.predicate.String() + " (" + p.message + ")" }

// DependencyError is a dependency of a bundle that cannot be read (an olm.package.required
// range blang/semver refuses, an olm.constraint olmsync cannot evaluate). It names the
// bundle and where it was read, and fails resolution with ErrorPreventedResolution.
type DependencyError struct {
	Bundle  string
	Package string
	// Source is the catalog of the bundle ("@existing/<namespace>" for an installed CSV).
	Source string
	Err    error
}

func (e *DependencyError) Error() string {
	return fmt.Sprintf("bundle %s of package %q in %s: %v", e.Bundle, e.Package, e.Source, e.Err)
}

func (e *DependencyError) Unwrap() error { return e.Err }

// dependencies are the entry's dependency predicates, one per olm.gvk.required,
// olm.package.required, olm.label.required and olm.constraint property, in property order.
func dependencies(e *entry) ([]predicate, error) {
	var out []predicate
	var errs []error
	for _, p := range e.props {
		pred, err := predicateFor(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if pred != nil {
			out = append(out, pred)
		}
	}
	if len(errs) > 0 {
		src := "@existing"
		if s := e.source(); s != nil {
			src = "catalog " + s.key.String()
		}
		return nil, &DependencyError{Bundle: e.name, Package: e.pkg, Source: src, Err: errors.Join(errs...)}
	}
	return out, nil
}

func predicateFor(p catalog.Property) (predicate, error) {
	switch p.Type {
	case catalog.PropertyGVKRequired, catalog.PropertyPackageRequired, catalog.PropertyLabelRequired, catalog.PropertyConstraint:
	default:
		return nil, nil
	}
	bp, err := catalog.ParseProperties([]catalog.Property{p})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", p.Type, p.Value, err)
	}
	switch {
	case len(bp.Requires) == 1:
		return gvkPredicate{bp.Requires[0]}, nil
	case len(bp.RequiresPackages) == 1:
		return packagePredicateFor(bp.RequiresPackages[0])
	case len(bp.RequiresLabels) == 1:
		return labelPredicate{bp.RequiresLabels[0]}, nil
	case len(bp.Constraints) == 1:
		pred, err := constraintPredicate(bp.Constraints[0])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", p.Type, p.Value, err)
		}
		return pred, nil
	}
	return nil, nil
}

func packagePredicateFor(req catalog.PackageRequirement) (predicate, error) {
	r, err := semverrange.Parse(req.VersionRange)
	if err != nil {
		return nil, fmt.Errorf("olm.package.required %s: invalid version range %q: %w", req.PackageName, req.VersionRange, err)
	}
	return packagePredicate{pkg: req.PackageName, rng: r, rangeText: req.VersionRange}, nil
}

func constraintPredicate(c catalog.Constraint) (predicate, error) {
	var pred predicate
	switch {
	case c.GVK != nil:
		pred = gvkPredicate{*c.GVK}
	case c.Package != nil:
		p, err := packagePredicateFor(*c.Package)
		if err != nil {
			return nil, err
		}
		pred = p
	case c.All != nil, c.Any != nil, c.Not != nil:
		op, list := "all", c.All
		if c.Any != nil {
			op, list = "any", c.Any
		} else if c.Not != nil {
			op, list = "none", c.Not
		}
		cp := compoundPredicate{op: op}
		for _, sub := range list.Constraints {
			q, err := constraintPredicate(sub)
			if err != nil {
				return nil, err
			}
			cp.preds = append(cp.preds, q)
		}
		pred = cp
	case c.CEL != nil:
		p, err := newCELPredicate(c.CEL.Rule)
		if err != nil {
			return nil, err
		}
		pred = p
	default:
		return nil, errors.New("empty constraint")
	}
	if c.FailureMessage != "" {
		pred = messagePredicate{predicate: pred, message: c.FailureMessage}
	}
	return pred, nil
}

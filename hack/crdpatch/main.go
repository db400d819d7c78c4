// Command crdpatch adjusts the CRDs controller-gen writes where a kubebuilder marker cannot
// reach, as OLM's own build does: it runs as part of `make generate`, right after
// controller-gen, and fails if a path it patches no longer exists.
//
// The patches: the pod template metadata of a CSV's deployments
// (spec.install.spec.deployments[].spec.template.metadata) keeps unknown fields. controller-gen
// renders an embedded ObjectMeta as an empty object, which the API server would prune, losing
// the pod labels that the Deployment's selector needs; real CSVs also carry
// `creationTimestamp: null` there. And, as in OLM's CRD, an OperatorCondition's
// spec.overrides[] does not require lastTransitionTime: an administrator writes an override
// by hand, and OLM never reads its time.
package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch <crd folder>")
		os.Exit(2)
	}
	if err := patchCSV(os.Args[1] + "/operators.coreos.com_clusterserviceversions.yaml"); err != nil {
		fmt.Fprintln(os.Stderr, "crdpatch:", err)
		os.Exit(1)
	}
	if err := patchOperatorCondition(os.Args[1] + "/operators.coreos.com_operatorconditions.yaml"); err != nil {
		fmt.Fprintln(os.Stderr, "crdpatch:", err)
		os.Exit(1)
	}
}

func patchCSV(file string) error {
	path := []string{"spec", "install", "spec", "deployments", "[]", "spec", "template", "metadata"}
	return patch(file, path, func(s *apiextensionsv1.JSONSchemaProps) {
		preserve := true
		s.XPreserveUnknownFields = &preserve
	})
}

func patchOperatorCondition(file string) error {
	path := []string{"spec", "overrides", "[]"}
	return patch(file, path, func(s *apiextensionsv1.JSONSchemaProps) {
		s.Required = slices.DeleteFunc(s.Required, func(f string) bool { return f == "lastTransitionTime" })
	})
}

// patch applies fix to the schema at path in every version of the CRD in file.
func patch(file string, path []string, fix func(*apiextensionsv1.JSONSchemaProps)) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, v := range crd.Spec.Versions {
		if err := at(v.Schema.OpenAPIV3Schema, path, fix); err != nil {
			return fmt.Errorf("%s: %s: %w", file, strings.Join(path, "."), err)
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	return os.WriteFile(file, append([]byte("---\n"), out...), 0o644)
}

// at applies fix to the schema at path, where "[]" steps into list items.
func at(s *apiextensionsv1.JSONSchemaProps, path []string, fix func(*apiextensionsv1.JSONSchemaProps)) error {
	if len(path) == 0 {
		fix(s)
		return nil
	}
	if path[0] == "[]" {
		if s.Items == nil || s.Items.Schema == nil {
			return fmt.Errorf("not a list")
		}
		return at(s.Items.Schema, path[1:], fix)
	}
	child, ok := s.Properties[path[0]]
	if !ok {
		return fmt.Errorf("no property %q", path[0])
	}
	if err := at(&child, path[1:], fix); err != nil {
		return err
	}
	s.Properties[path[0]] = child
	return nil
}

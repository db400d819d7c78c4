package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// GroupName is OLM's API group.
	GroupName = "operators.coreos.com"
	// GroupVersion is the version of this package.
	GroupVersion = "v1"
)

var (
	// SchemeGroupVersion is operators.coreos.com/v1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: GroupVersion}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion,
		&OperatorGroup{}, &OperatorGroupList{},
		&OperatorCondition{}, &OperatorConditionList{},
	)
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}

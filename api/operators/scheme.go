package operators

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	operatorsv1 "github.com/olmsync/olmsync/api/operators/v1"
	operatorsv1alpha1 "github.com/olmsync/olmsync/api/operators/v1alpha1"
	operatorsv1alpha2 "github.com/olmsync/olmsync/api/operators/v1alpha2"
	operatorsv2 "github.com/olmsync/olmsync/api/operators/v2"
)

// GroupName is OLM's API group.
const GroupName = operatorsv1alpha1.GroupName

// AddToScheme adds every version of operators.coreos.com to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		operatorsv1alpha1.AddToScheme,
		operatorsv1alpha2.AddToScheme,
		operatorsv1.AddToScheme,
		operatorsv2.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// Scheme holds only the operators.coreos.com kinds; Decode uses it.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(AddToScheme(s))
	return s
}()

package olm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Mode says whether olmsync runs its own OLM (--olm=embedded|external|auto).
type Mode string

const (
	// ModeEmbedded runs the embedded OLM controllers, even beside a detected OLM (the user said so).
	ModeEmbedded Mode = "embedded"
	// ModeExternal leaves every OLM kind to the cluster's own OLM.
	ModeExternal Mode = "external"
	// ModeAuto runs the embedded controllers unless an OLM is detected (DetectOLM).
	ModeAuto Mode = "auto"
)

// ParseMode reads the --olm flag's value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeEmbedded, ModeExternal, ModeAuto:
		return m, nil
	}
	return "", fmt.Errorf("--olm=%q: want embedded, external or auto", s)
}

// olmOnlyCRDs are CRDs OLM installs that olmsync does not: their presence means an OLM
// installed (or installs) into this cluster. operatorconditions is not one of them: olmsync
// serves OperatorConditions too.
var olmOnlyCRDs = []string{
	"olmconfigs.operators.coreos.com",
	"operators.operators.coreos.com",
}

// olmDeployments are the names of OLM's own Deployments.
var olmDeployments = []string{"olm-operator", "catalog-operator"}

// DetectOLM says what shows that another OLM runs in the cluster: its Deployments (in any
// namespace) and the CRDs only OLM installs. Empty when nothing does.
func DetectOLM(ctx context.Context, reader client.Reader) ([]string, error) {
	var found []string
	for _, name := range olmOnlyCRDs {
		err := reader.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
		switch {
		case err == nil:
			found = append(found, "CustomResourceDefinition "+name)
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("look for OLM's CRD %s: %w", name, err)
		}
	}
	var deployments appsv1.DeploymentList
	if err := reader.List(ctx, &deployments); err != nil {
		return nil, fmt.Errorf("look for OLM's deployments: %w", err)
	}
	for _, d := range deployments.Items {
		if slices.Contains(olmDeployments, d.Name) {
			found = append(found, fmt.Sprintf("Deployment %s/%s", d.Namespace, d.Name))
		}
	}
	return found, nil
}

// ErrOLMPresent says another OLM was detected and the mode does not allow running beside it.
var ErrOLMPresent = errors.New("another OLM runs in this cluster")

// Decide says whether the embedded OLM controllers start, given the mode and what DetectOLM
// found: embedded always, external never, auto only when nothing was found. With auto and an
// OLM present it returns false and an error wrapping ErrOLMPresent that names what was found,
// for the caller to log (the rest of olmsync runs on and leaves OLM kinds to that OLM).
func Decide(mode Mode, found []string) (bool, error) {
	switch mode {
	case ModeEmbedded:
		return true, nil
	case ModeExternal:
		return false, nil
	}
	if len(found) == 0 {
		return true, nil
	}
	return false, fmt.Errorf("%w (%s): the embedded OLM does not start; run with --olm=embedded to start it anyway, or --olm=external to say this is intended",
		ErrOLMPresent, strings.Join(found, ", "))
}

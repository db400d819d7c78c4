package install

import (
	"errors"
	"fmt"
)

// Reason says why a strategy is not installed or cannot be; the CSV phase machine branches on
// it as OLM does (OLM pkg/controller/install/errors.go).
type Reason string

const (
	// ReasonInvalidStrategy: the strategy cannot be executed at all. Unrecoverable.
	ReasonInvalidStrategy Reason = "InvalidStrategy"
	// ReasonTimeout: a deployment exceeded its progress deadline. Unrecoverable.
	ReasonTimeout Reason = "Timeout"
	// ReasonInsufficientPermissions: the API server refused to create a component. Unrecoverable.
	ReasonInsufficientPermissions Reason = "InsufficentPermissions"
	// ReasonComponentMissing: a deployment of the strategy does not exist.
	ReasonComponentMissing Reason = "ComponentMissing"
	// ReasonWaiting: a deployment exists but is not ready yet.
	ReasonWaiting Reason = "Waiting"
	// ReasonAnnotationsMissing: a deployment's pod template lacks the CSV's annotations.
	ReasonAnnotationsMissing Reason = "AnnotationsMissing"
	// ReasonDeploymentUpdated: a deployment's spec hash differs from the CSV's: it needs an update.
	ReasonDeploymentUpdated Reason = "DeploymentUpdated"
)

// StrategyError is a strategy that is not (or cannot be) installed, with OLM's message.
type StrategyError struct {
	Reason  Reason
	Message string
}

func (e *StrategyError) Error() string { return e.Message }

// Unrecoverable reports whether OLM gives up on the install for this reason (it then fails the
// CSV with InstallComponentFailedNoRetry or InstallCheckFailed instead of retrying).
func (e *StrategyError) Unrecoverable() bool {
	switch e.Reason {
	case ReasonInvalidStrategy, ReasonTimeout, ReasonInsufficientPermissions:
		return true
	}
	return false
}

// NeedsReinstall reports whether the deployments exist but must be rewritten (their spec hash or
// pod-template annotations differ): OLM then moves the CSV back to InstallReady.
func (e *StrategyError) NeedsReinstall() bool {
	return e.Reason == ReasonDeploymentUpdated || e.Reason == ReasonAnnotationsMissing
}

// IsUnrecoverable reports whether err holds a *StrategyError that OLM does not retry.
func IsUnrecoverable(err error) bool {
	var se *StrategyError
	return errors.As(err, &se) && se.Unrecoverable()
}

func strategyErrorf(reason Reason, format string, args ...any) *StrategyError {
	return &StrategyError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

package gitsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	olmsyncv1alpha1 "github.com/olmsync/olmsync/api/olmsync/v1alpha1"
)

// ErrUnsafeKubeconfig marks a kubeconfig that would make olmsync run a program or read a
// file of its own: a tenant could run code in olmsync's pod, or borrow its identity
// (its service account token is a file).
var ErrUnsafeKubeconfig = errors.New("the kubeconfig is refused")

// KubeConfigError is a Secret of spec.kubeConfig that cannot give a client.
type KubeConfigError struct {
	Secret types.NamespacedName
	Err    error
}

func (e *KubeConfigError) Error() string {
	return fmt.Sprintf("spec.kubeConfig Secret %s: %v", e.Secret, e.Err)
}

func (e *KubeConfigError) Unwrap() error { return e.Err }

// remoteConfig reads the kubeconfig of spec.kubeConfig and returns its connection,
// refusing what is not self-contained.
func remoteConfig(ctx context.Context, reader client.Reader, obj *olmsyncv1alpha1.Sync) (*rest.Config, string, error) {
	ref := obj.Spec.KubeConfig.SecretRef
	key := types.NamespacedName{Namespace: obj.Namespace, Name: ref.Name}
	fail := func(err error) (*rest.Config, string, error) {
		return nil, "", &KubeConfigError{Secret: key, Err: err}
	}
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return fail(errors.New("not found"))
		}
		return fail(err)
	}
	var data []byte
	switch {
	case ref.Key != "":
		data = secret.Data[ref.Key]
	case len(secret.Data["value"]) > 0:
		data = secret.Data["value"]
	default:
		data = secret.Data["value.yaml"]
	}
	if len(data) == 0 {
		return fail(fmt.Errorf("no kubeconfig under the key %q", cmp.Or(ref.Key, "value")))
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return fail(fmt.Errorf("not a kubeconfig: %w", err))
	}
	if err := selfContained(kc); err != nil {
		return fail(err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fail(err)
	}
	return cfg, secret.ResourceVersion, nil
}

// selfContained refuses a kubeconfig that runs a program or reads a file.
func selfContained(kc *clientcmdapi.Config) error {
	for name, a := range kc.AuthInfos {
		switch {
		case a.Exec != nil:
			return fmt.Errorf("%w: user %q runs a program (exec)", ErrUnsafeKubeconfig, name)
		case a.AuthProvider != nil:
			return fmt.Errorf("%w: user %q uses an auth-provider plugin", ErrUnsafeKubeconfig, name)
		case a.TokenFile != "" || a.ClientCertificate != "" || a.ClientKey != "":
			return fmt.Errorf("%w: user %q reads a file (tokenFile, client-certificate, client-key): put the data in the kubeconfig", ErrUnsafeKubeconfig, name)
		}
	}
	for name, c := range kc.Clusters {
		if c.CertificateAuthority != "" {
			return fmt.Errorf("%w: cluster %q reads a file (certificate-authority): put certificate-authority-data in the kubeconfig", ErrUnsafeKubeconfig, name)
		}
	}
	return nil
}

// remoteClients keeps one client per Sync and kubeconfig version: a client finds the
// remote cluster's kinds by discovery, which a reconcile should not repeat.
type remoteClients struct {
	mu      sync.Mutex
	clients map[string]client.Client
}

var remotes = &remoteClients{clients: map[string]client.Client{}}

// remoteClient is the client of spec.kubeConfig's cluster, impersonating
// spec.serviceAccountName there when set.
func remoteClient(ctx context.Context, c client.Client, reader client.Reader, obj *olmsyncv1alpha1.Sync) (client.Client, error) {
	cfg, version, err := remoteConfig(ctx, reader, obj)
	if err != nil {
		return nil, err
	}
	sa := obj.Spec.ServiceAccountName
	cacheKey := fmt.Sprintf("%s/%s/%s/%s/%s", obj.UID, obj.Spec.KubeConfig.SecretRef.Name, obj.Spec.KubeConfig.SecretRef.Key, version, sa)
	remotes.mu.Lock()
	defer remotes.mu.Unlock()
	if rc, ok := remotes.clients[cacheKey]; ok {
		return rc, nil
	}
	if sa != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", obj.Namespace, sa)}
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, &KubeConfigError{Secret: types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.KubeConfig.SecretRef.Name}, Err: err}
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("spec.kubeConfig: discover the remote cluster's kinds: %w", err)
	}
	rc, err := client.New(cfg, client.Options{Scheme: c.Scheme(), Mapper: mapper, HTTPClient: httpClient})
	if err != nil {
		return nil, err
	}
	// One entry per Sync: a new kubeconfig version replaces the old client.
	remotes.forgetLocked(obj.UID)
	remotes.clients[cacheKey] = rc
	return rc, nil
}

// forget drops the client of a Sync that is gone, with its discovery cache and its
// connections.
func (rc *remoteClients) forget(uid types.UID) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.forgetLocked(uid)
}

func (rc *remoteClients) forgetLocked(uid types.UID) {
	for k := range rc.clients {
		if strings.HasPrefix(k, string(uid)+"/") {
			delete(rc.clients, k)
		}
	}
}

// Package written remembers what the embedded OLM's controllers wrote, as the API server
// answered each write, for as long as the manager's cache may not show it yet. The
// controllers read from the cache; a cache a moment behind shows an object one of them (or
// another of the same manager) has just created as missing, or shows the version its last
// update replaced. Read from such a cache, a create is refused as AlreadyExists and an
// update as a Conflict, and each refusal is followed by a read from the API server: about
// 1,500 requests in BenchmarkSteadyState, where an InstallPlan's steps and the CSV
// controller's permissions write the same ServiceAccounts and RBAC, and the OperatorGroup
// controller rewrites its ClusterRoles. Objects takes the place of kube-controller-manager's
// expectations (its ReplicaSet controller does not create a pod it expects to see), with the
// object kept, since these controllers update what they created: a read through Objects
// returns the object this process wrote when the cache shows it missing (created here) or at
// a version older than its last write, and the cache's copy otherwise. Only objects the
// cache shows (its label selectors match them), of kinds whose informers Objects watches,
// are remembered; a missing object is taken as written only while its kind's informer has
// taken in no event as new as the write (resourceVersions compare as numbers: KEP-5504), so
// that a deletion the cache shows is never hidden. An informer's reflector takes an event in
// a moment before its cache does (its LastSyncResourceVersion counts what it received): a
// read that finds the object missing in that moment waits, up to HandledWait, for the
// informer's handlers — which it calls after its cache took an event in — to pass the
// write, and reads the cache again, which then shows the object or its deletion; so does a
// read during which a handler dropped what was remembered of the object. The
// informers' events drop what the cache shows, and what is older than a TTL goes.
//
// Versions is the same idea for one question, asked of InstallPlans: is the cached copy the
// version this process wrote last? The InstallPlan controller executes a plan only from a
// copy proven current; one it wrote itself, or the Subscription controller wrote, needs no
// read from the API server to prove it.
package written

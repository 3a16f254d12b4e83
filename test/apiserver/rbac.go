package main

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	fieldManager    = "krply-apiserver-harness"
	rbacGroup       = "rbac.authorization.k8s.io"
	recorderRole    = "krply-recorder"
	replayerRole    = "krply-replayer"
	harnessLabelKey = "krply.dev/test-harness"
)

// replayNamespaces exist from the start so replay tests need no admin step; index.ts grantReplayer adds more.
var replayNamespaces = []string{"replay-a", "replay-b"}

// recordedResources is the recorder's read set: named resources only, never secrets, never a wildcard, so a
// test that needs more must say so here.
var recordedResources = []struct {
	group     string
	resources []string
}{
	{"", []string{"namespaces", "configmaps", "services", "pods", "events"}},
	{"apps", []string{"deployments", "statefulsets", "daemonsets", "replicasets"}},
	{"node.k8s.io", []string{"runtimeclasses"}},
	{"events.k8s.io", []string{"events"}},
	{"apiextensions.k8s.io", []string{"customresourcedefinitions"}},
}

// replayedResources are the namespaced kinds the replayer may write inside a replay-* namespace.
var replayedResources = []struct {
	group     string
	resources []string
}{
	{"", []string{"configmaps", "services", "pods"}},
	{"apps", []string{"deployments", "statefulsets", "daemonsets", "replicasets"}},
}

func roleRef(name string) *rbacv1ac.RoleRefApplyConfiguration {
	return rbacv1ac.RoleRef().WithAPIGroup(rbacGroup).WithKind("ClusterRole").WithName(name)
}

func userSubject(name string) *rbacv1ac.SubjectApplyConfiguration {
	return rbacv1ac.Subject().WithAPIGroup(rbacGroup).WithKind("User").WithName(name)
}

// ensureRBAC is server-side apply with force, so it is idempotent and also repairs drift after a restart.
func ensureRBAC(ctx context.Context, cs kubernetes.Interface) error {
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	labels := map[string]string{harnessLabelKey: "true"}

	recorder := rbacv1ac.ClusterRole(recorderRole).WithLabels(labels)
	for _, r := range recordedResources {
		recorder.WithRules(rbacv1ac.PolicyRule().WithAPIGroups(r.group).WithResources(r.resources...).
			WithVerbs("get", "list", "watch"))
	}
	if _, err := cs.RbacV1().ClusterRoles().Apply(ctx, recorder, opts); err != nil {
		return fmt.Errorf("apply ClusterRole %s: %w", recorderRole, err)
	}
	binding := rbacv1ac.ClusterRoleBinding(recorderRole).WithLabels(labels).
		WithRoleRef(roleRef(recorderRole)).WithSubjects(userSubject("recorder"))
	if _, err := cs.RbacV1().ClusterRoleBindings().Apply(ctx, binding, opts); err != nil {
		return fmt.Errorf("apply ClusterRoleBinding %s: %w", recorderRole, err)
	}

	replayer := rbacv1ac.ClusterRole(replayerRole).WithLabels(labels)
	for _, r := range replayedResources {
		replayer.WithRules(rbacv1ac.PolicyRule().WithAPIGroups(r.group).WithResources(r.resources...).
			WithVerbs("create", "patch", "get"))
	}
	if _, err := cs.RbacV1().ClusterRoles().Apply(ctx, replayer, opts); err != nil {
		return fmt.Errorf("apply ClusterRole %s: %w", replayerRole, err)
	}
	for _, ns := range replayNamespaces {
		if err := grantReplayer(ctx, cs, ns, opts, labels); err != nil {
			return err
		}
	}
	// The RBAC authorizer reads through informers, so a fresh binding takes a moment to count; the ready line
	// must mean that the users already have their rights.
	if err := waitAllowed(ctx, cs, "recorder", "", "list", "", "configmaps"); err != nil {
		return err
	}
	for _, ns := range replayNamespaces {
		if err := waitAllowed(ctx, cs, "replayer", ns, "create", "", "configmaps"); err != nil {
			return err
		}
	}
	return nil
}

func waitAllowed(ctx context.Context, cs kubernetes.Interface, user, ns, verb, group, resource string) error {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: group, Resource: resource,
		},
	}}
	for {
		out, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err == nil && out.Status.Allowed {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s still may not %s %s in %q: %v", user, verb, resource, ns, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// grantReplayer is the Go twin of index.ts grantReplayer: RBAC cannot match namespace names by pattern, so
// each replay-* namespace gets its own RoleBinding to the shared ClusterRole.
func grantReplayer(ctx context.Context, cs kubernetes.Interface, ns string, opts metav1.ApplyOptions, labels map[string]string) error {
	if _, err := cs.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(ns).WithLabels(labels), opts); err != nil {
		return fmt.Errorf("apply Namespace %s: %w", ns, err)
	}
	rb := rbacv1ac.RoleBinding(replayerRole, ns).WithLabels(labels).
		WithRoleRef(roleRef(replayerRole)).WithSubjects(userSubject("replayer"))
	if _, err := cs.RbacV1().RoleBindings(ns).Apply(ctx, rb, opts); err != nil {
		return fmt.Errorf("apply RoleBinding %s/%s: %w", ns, replayerRole, err)
	}
	return nil
}

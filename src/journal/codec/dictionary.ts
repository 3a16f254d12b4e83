// A preset deflate dictionary of text that most Kubernetes objects share. Small bodies compress
// poorly on their own because deflate has not yet seen the key names; with the dictionary it has.
// Append-only in spirit: bodies written with it carry ENC_DICT, so changing this text would make
// them unreadable. A different dictionary needs a new flag.
const FRAGMENTS = [
  '"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{},"f:annotations":{}},',
  '"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{}}}},"f:status":{',
  '"f:availableReplicas":{},"f:readyReplicas":{},"f:conditions":{}}',
  '"manager":"kube-controller-manager","operation":"Update","subresource":"status",',
  '"manager":"kubectl-client-side-apply","manager":"kubelet",',
  '"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","controller":true,"blockOwnerDeletion":true,',
  '"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",',
  '"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler",',
  '"securityContext":{},"serviceAccountName":"default","serviceAccount":"default","nodeName":"',
  '"ports":[{"containerPort":8080,"protocol":"TCP","name":"http"}],"env":[{"name":"',
  '"resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},',
  '"volumeMounts":[{"name":"kube-api-access","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}],',
  '"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},',
  '"revisionHistoryLimit":10,"progressDeadlineSeconds":600,"selector":{"matchLabels":{"app":"',
  '"template":{"metadata":{"labels":{"app":"',
  '"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},',
  '"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable","message":"ReplicaSet \\"',
  '\\" has successfully progressed."}',
  '"lastUpdateTime":"","lastTransitionTime":"","lastProbeTime":null,',
  '"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,',
  '"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"},{"type":"PodScheduled","status":"True",',
  '"type":"Initialized","type":"ContainersReady","hostIP":"10.0.0.1","podIP":"10.0.0.1","qosClass":"Burstable",',
  '"containerStatuses":[{"name":"app","ready":true,"restartCount":0,"started":true,"state":{"running":{"startedAt":"',
  '"image":"","imageID":"docker.io/library/","containerID":"containerd://',
  '"pod-template-hash":"","app.kubernetes.io/name":"","app.kubernetes.io/instance":"","app.kubernetes.io/part-of":"',
  '"app.kubernetes.io/managed-by":"Helm","app.kubernetes.io/component":"","app.kubernetes.io/version":"',
  '"annotations":{"deployment.kubernetes.io/revision":"1","kubectl.kubernetes.io/last-applied-configuration":"',
  '"apiVersion":"v1","kind":"ConfigMap","data":{"',
  '"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"app","image":"',
  '"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"',
  '"namespace":"default","uid":"","resourceVersion":"","generation":1,"creationTimestamp":"',
  '"labels":{"app":"',
];

/** The dictionary bytes for ENC_DICT bodies. */
export const DEFLATE_DICTIONARY = Buffer.from(FRAGMENTS.join(""), "utf8");

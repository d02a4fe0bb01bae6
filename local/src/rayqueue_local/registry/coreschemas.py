"""OpenAPI v3 schemas of the ``core/v1`` kinds served: Pod, Namespace, ConfigMap, Secret, Service, ...

A minimal but correct subset of upstream's: the fields this emulator and ``kubectl create`` use,
with upstream's strategic-merge list keys (containers by ``name``, ports by ``containerPort``, ...),
so that ``kubectl apply`` computes the patches it computes against a real cluster. Undescribed parts
are ``x-kubernetes-preserve-unknown-fields`` objects: this server does not prune built-in kinds.

Example:
    >>> spec = core_schemas()["io.k8s.api.core.v1.PodSpec"]
    >>> spec["properties"]["containers"]["x-kubernetes-patch-merge-key"]
    'name'
"""

from __future__ import annotations

from rayqueue_local.registry import openapischema as s

__all__ = ["core_schemas"]


def core_schemas() -> dict[str, s.Schema]:
    """The ``core/v1`` definitions this server serves (and the Pod parts other kinds embed)."""
    c = "io.k8s.api.core.v1"
    return {
        f"{c}.EnvVar": s.obj(
            "EnvVar represents an environment variable present in a Container.",
            {
                "name": s.string("Name of the environment variable."),
                "value": s.string(
                    "Variable references $(VAR_NAME) are expanded using the previously defined variables."
                ),
                "valueFrom": s.free(
                    "Source for the environment variable's value. Cannot be used if value is not empty."
                ),
            },
            ("name",),
        ),
        f"{c}.ContainerPort": s.obj(
            "ContainerPort represents a network port in a single container.",
            {
                "containerPort": s.integer("Number of port to expose on the pod's IP address."),
                "hostPort": s.integer("Number of port to expose on the host."),
                "name": s.string("If specified, this must be an IANA_SVC_NAME and unique within the pod."),
                "protocol": s.string('Protocol for port. Must be UDP, TCP, or SCTP. Defaults to "TCP".'),
            },
            ("containerPort",),
        ),
        f"{c}.ResourceRequirements": s.obj(
            "ResourceRequirements describes the compute resource requirements.",
            {
                "limits": {
                    "type": "object",
                    "additionalProperties": s.ref(s.QUANTITY),
                    "description": "Limits describes the maximum amount of compute resources allowed.",
                },
                "requests": {
                    "type": "object",
                    "additionalProperties": s.ref(s.QUANTITY),
                    "description": "Requests describes the minimum amount of compute resources required.",
                },
            },
        ),
        f"{c}.VolumeMount": s.obj(
            "VolumeMount describes a mounting of a Volume within a container.",
            {
                "mountPath": s.string("Path within the container at which the volume should be mounted."),
                "name": s.string("This must match the Name of a Volume."),
                "readOnly": s.boolean(
                    "Mounted read-only if true, read-write otherwise (false or unspecified)."
                ),
                "subPath": s.string(
                    "Path within the volume from which the container's volume should be mounted."
                ),
            },
            ("name", "mountPath"),
        ),
        f"{c}.Volume": {
            **s.obj(
                "Volume represents a named volume in a pod that may be accessed by any container in the pod.",
                {"name": s.string("name of the volume. Must be a DNS_LABEL and unique within the pod.")},
                ("name",),
            ),
            "x-kubernetes-preserve-unknown-fields": True,
        },
        f"{c}.Container": s.obj(
            "A single application container that you want to run within a pod.",
            {
                "args": s.strlist("Arguments to the entrypoint.", **{"x-kubernetes-list-type": "atomic"}),
                "command": s.strlist(
                    "Entrypoint array. Not executed within a shell.", **{"x-kubernetes-list-type": "atomic"}
                ),
                "env": s.list_of(
                    f"{c}.EnvVar", "List of environment variables to set in the container.", "name"
                ),
                "envFrom": {
                    "type": "array",
                    "items": s.free("EnvFromSource"),
                    "description": "Sources to populate environment variables in the container.",
                },
                "image": s.string("Container image name."),
                "imagePullPolicy": s.string("Image pull policy. One of Always, Never, IfNotPresent."),
                "lifecycle": s.free(
                    "Actions that the management system should take in response to container lifecycle "
                    "events."
                ),
                "livenessProbe": s.free("Periodic probe of container liveness."),
                "name": s.string("Name of the container specified as a DNS_LABEL."),
                "ports": s.list_of(
                    f"{c}.ContainerPort", "List of ports to expose from the container.", "containerPort"
                ),
                "readinessProbe": s.free("Periodic probe of container service readiness."),
                "resources": s.field(
                    f"{c}.ResourceRequirements", "Compute Resources required by this container.", default={}
                ),
                "securityContext": s.free(
                    "SecurityContext defines the security options the container should be run with."
                ),
                "startupProbe": s.free("StartupProbe indicates that the Pod has successfully initialized."),
                "stdin": s.boolean(
                    "Whether this container should allocate a buffer for stdin in the container runtime."
                ),
                "terminationMessagePath": s.string(
                    "Path at which the file to which the container's termination message will be written "
                    "is mounted."
                ),
                "terminationMessagePolicy": s.string(
                    "Indicate how the termination message should be populated."
                ),
                "tty": s.boolean("Whether this container should allocate a TTY for itself."),
                "volumeMounts": s.list_of(
                    f"{c}.VolumeMount", "Pod volumes to mount into the container's filesystem.", "mountPath"
                ),
                "workingDir": s.string("Container's working directory."),
            },
            ("name",),
        ),
        f"{c}.PodSpec": s.obj(
            "PodSpec is a description of a pod.",
            {
                "affinity": s.free("If specified, the pod's scheduling constraints"),
                "automountServiceAccountToken": s.boolean(
                    "Whether a service account token should be automatically mounted."
                ),
                "containers": s.list_of(f"{c}.Container", "List of containers belonging to the pod.", "name"),
                "hostname": s.string("Specifies the hostname of the Pod."),
                "imagePullSecrets": {
                    "type": "array",
                    "items": s.free("LocalObjectReference"),
                    "description": "ImagePullSecrets is an optional list of references to secrets.",
                },
                "initContainers": s.list_of(
                    f"{c}.Container", "List of initialization containers belonging to the pod.", "name"
                ),
                "nodeName": s.string("NodeName indicates in which node this pod is scheduled."),
                "nodeSelector": s.strmap(
                    "NodeSelector is a selector which must be true for the pod to fit on a node."
                ),
                "priorityClassName": s.string("If specified, indicates the pod's priority."),
                "restartPolicy": s.string(
                    "Restart policy for all containers within the pod. One of Always, OnFailure, Never."
                ),
                "schedulerName": s.string("If specified, the pod will be dispatched by specified scheduler."),
                "securityContext": s.free("SecurityContext holds pod-level security attributes."),
                "serviceAccountName": s.string(
                    "ServiceAccountName is the name of the ServiceAccount to use to run this pod."
                ),
                "subdomain": s.string(
                    "If specified, the fully qualified Pod hostname will be "
                    '"<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>".'
                ),
                "terminationGracePeriodSeconds": s.integer(
                    "Optional duration in seconds the pod needs to terminate gracefully.", "int64"
                ),
                "tolerations": {
                    "type": "array",
                    "items": s.free("Toleration"),
                    "description": "If specified, the pod's tolerations.",
                    "x-kubernetes-list-type": "atomic",
                },
                "volumes": s.list_of(
                    f"{c}.Volume",
                    "List of volumes that can be mounted by containers belonging to the pod.",
                    "name",
                ),
            },
            ("containers",),
        ),
        f"{c}.PodTemplateSpec": s.obj(
            "PodTemplateSpec describes the data a pod should have when created from a template",
            {
                "metadata": s.field(f"{s.META}.ObjectMeta", s.OBJECT_META_DESCRIPTION, default={}),
                "spec": s.field(
                    f"{c}.PodSpec", "Specification of the desired behavior of the pod.", default={}
                ),
            },
        ),
        f"{c}.PodStatus": {
            **s.obj(
                "PodStatus represents information about the status of a pod.",
                {
                    "conditions": {
                        "type": "array",
                        "items": s.free("PodCondition"),
                        "description": "Current service state of pod.",
                        "x-kubernetes-patch-merge-key": "type",
                        "x-kubernetes-patch-strategy": "merge",
                    },
                    "hostIP": s.string(
                        "hostIP holds the IP address of the host to which the pod is assigned."
                    ),
                    "message": s.string(
                        "A human readable message indicating details about why the pod is in this condition."
                    ),
                    "phase": s.string("The phase of a Pod: Pending, Running, Succeeded, Failed or Unknown."),
                    "podIP": s.string("podIP address allocated to the pod."),
                    "reason": s.string(
                        "A brief CamelCase message indicating details about why the pod is in this state."
                    ),
                    "startTime": s.field(
                        s.TIME, "RFC 3339 date and time at which the object was acknowledged by the Kubelet."
                    ),
                },
            ),
            "x-kubernetes-preserve-unknown-fields": True,
        },
        f"{c}.Pod": s.kind_schema(
            "",
            "v1",
            "Pod",
            "Pod is a collection of containers that can run on a host.",
            s.spec_and_status(
                f"{c}.Pod",
                "Specification of the desired behavior of the pod.",
                "Most recently observed status of the pod.",
            ),
        ),
        f"{c}.Namespace": s.kind_schema(
            "",
            "v1",
            "Namespace",
            "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
            {
                "spec": s.obj(
                    "Spec defines the behavior of the Namespace.",
                    {
                        "finalizers": s.strlist(
                            "Finalizers is an opaque list of values that must be empty to permanently "
                            "remove object from storage."
                        )
                    },
                ),
                "status": s.obj(
                    "Status describes the current status of a Namespace.",
                    {
                        "conditions": {
                            "type": "array",
                            "items": s.free("NamespaceCondition"),
                            "description": "The latest observations of a namespace's current state.",
                            "x-kubernetes-patch-merge-key": "type",
                            "x-kubernetes-patch-strategy": "merge",
                        },
                        "phase": s.string(
                            "Phase is the current lifecycle phase of the namespace: Active or Terminating."
                        ),
                    },
                ),
            },
        ),
        f"{c}.ConfigMap": s.kind_schema(
            "",
            "v1",
            "ConfigMap",
            "ConfigMap holds configuration data for pods to consume.",
            {
                "binaryData": s.strmap("BinaryData contains the binary data.", "byte"),
                "data": s.strmap("Data contains the configuration data."),
                "immutable": s.boolean(
                    "Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated."
                ),
            },
        ),
        f"{c}.Secret": s.kind_schema(
            "",
            "v1",
            "Secret",
            "Secret holds secret data of a certain type. The total bytes of the values in the Data field "
            "must be less than MaxSecretSize bytes.",
            {
                "data": s.strmap("Data contains the secret data. Each value must be base64 encoded.", "byte"),
                "immutable": s.boolean(
                    "Immutable, if set to true, ensures that data stored in the Secret cannot be updated."
                ),
                "stringData": s.strmap(
                    "stringData allows specifying non-binary secret data in string form. It is write-only."
                ),
                "type": s.string("Used to facilitate programmatic handling of secret data."),
            },
        ),
        f"{c}.ServicePort": s.obj(
            "ServicePort contains information on service's port.",
            {
                "appProtocol": s.string("The application protocol for this port."),
                "name": s.string("The name of this port within the service."),
                "nodePort": s.integer("The port on each node on which this service is exposed."),
                "port": s.integer("The port that will be exposed by this service."),
                "protocol": s.string(
                    'The IP protocol for this port. Supports "TCP", "UDP", and "SCTP". Default is TCP.'
                ),
                "targetPort": {
                    "x-kubernetes-int-or-string": True,
                    "description": "Number or name of the port to access on the pods the service targets.",
                },
            },
            ("port",),
        ),
        f"{c}.Service": s.kind_schema(
            "",
            "v1",
            "Service",
            "Service is a named abstraction of software service (for example, mysql) consisting of local "
            "port (for example 3306) that the proxy listens on, and the selector that determines which pods "
            "will answer requests sent through the proxy.",
            {
                "spec": {
                    **s.obj(
                        "Spec defines the behavior of a service.",
                        {
                            "clusterIP": s.string("clusterIP is the IP address of the service."),
                            "ports": {
                                **s.list_of(
                                    f"{c}.ServicePort",
                                    "The list of ports that are exposed by this service.",
                                    "port",
                                ),
                                "x-kubernetes-list-map-keys": ["port", "protocol"],
                            },
                            "selector": s.strmap(
                                "Route service traffic to pods with label keys and values matching this "
                                "selector."
                            ),
                            "type": s.string(
                                "type determines how the Service is exposed: ClusterIP, NodePort, "
                                "LoadBalancer, ExternalName."
                            ),
                        },
                    ),
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "status": s.free("Most recently observed status of the service."),
            },
        ),
        f"{c}.ServiceAccount": s.kind_schema(
            "",
            "v1",
            "ServiceAccount",
            "ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, "
            "for an identity; a principal that can be authenticated and authorized; a set of secrets.",
            {
                "automountServiceAccountToken": s.boolean(
                    "Whether pods running as this service account should have an API token automatically "
                    "mounted."
                ),
                "imagePullSecrets": {
                    "type": "array",
                    "items": s.free("LocalObjectReference"),
                    "description": "References to secrets in the same namespace to use for pulling images.",
                },
                "secrets": {
                    "type": "array",
                    "items": s.free("ObjectReference"),
                    "description": "Secrets pods running as this ServiceAccount may use.",
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge",
                },
            },
        ),
        f"{c}.Event": s.kind_schema(
            "",
            "v1",
            "Event",
            "Event is a report of an event somewhere in the cluster.",
            {
                "count": s.integer("The number of times this event has occurred."),
                "firstTimestamp": s.field(s.TIME, "The time at which the event was first recorded."),
                "involvedObject": s.free("The object that this event is about."),
                "lastTimestamp": s.field(
                    s.TIME, "The time at which the most recent occurrence of this event was recorded."
                ),
                "message": s.string("A human-readable description of the status of this operation."),
                "reason": s.string(
                    "This should be a short, machine understandable string that gives the reason for the "
                    "transition into the object's current status."
                ),
                "reportingComponent": s.string("Name of the controller that emitted this Event."),
                "reportingInstance": s.string("ID of the controller instance."),
                "source": s.free("The component reporting this event."),
                "type": s.string(
                    "Type of this event (Normal, Warning), new types could be added in the future"
                ),
            },
            ("metadata", "involvedObject"),
        ),
        f"{c}.Node": s.kind_schema(
            "",
            "v1",
            "Node",
            "Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache "
            "(i.e. in etcd).",
            {
                "spec": s.obj(
                    "Spec defines the behavior of a node.",
                    {
                        "podCIDR": s.string("PodCIDR represents the pod IP range assigned to the node."),
                        "providerID": s.string("ID of the node assigned by the cloud provider."),
                        "taints": {
                            "type": "array",
                            "items": s.free("Taint"),
                            "description": "If specified, the node's taints.",
                            "x-kubernetes-list-type": "atomic",
                        },
                        "unschedulable": s.boolean("Unschedulable controls node schedulability of new pods."),
                    },
                ),
                "status": {
                    **s.obj(
                        "Most recently observed status of the node.",
                        {
                            "addresses": {
                                "type": "array",
                                "items": s.free("NodeAddress"),
                                "description": "List of addresses reachable to the node.",
                                "x-kubernetes-patch-merge-key": "type",
                                "x-kubernetes-patch-strategy": "merge",
                            },
                            "allocatable": {
                                "type": "object",
                                "additionalProperties": s.ref(s.QUANTITY),
                                "description": "The resources of a node that are available for scheduling.",
                            },
                            "capacity": {
                                "type": "object",
                                "additionalProperties": s.ref(s.QUANTITY),
                                "description": "Capacity represents the total resources of a node.",
                            },
                            "conditions": {
                                "type": "array",
                                "items": s.free("NodeCondition"),
                                "description": "Conditions is an array of current observed node conditions.",
                                "x-kubernetes-patch-merge-key": "type",
                                "x-kubernetes-patch-strategy": "merge",
                            },
                            "nodeInfo": s.free("Set of ids/uuids to uniquely identify the node."),
                        },
                    ),
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
        ),
    }

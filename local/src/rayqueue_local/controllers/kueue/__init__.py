"""Kueue's behaviour for the local control plane: admission, queues, priorities and preemption.

Follows Kueue v0.19.2 with its default feature gates. The pure part does no I/O:
:mod:`.amounts` (units and formatting), :mod:`.quota` (the ClusterQueue/Cohort quota tree),
:mod:`.snapshot`, :mod:`.flavors` (flavor assignment), :mod:`.preemption` (classical preemption),
:mod:`.engine` (one admission pass -> decisions), :mod:`.workloads` (Workload builders),
:mod:`.conditions`, :mod:`.queue_status`, :mod:`.messages` (upstream wording). The rest connects
it to the store and the API server: :mod:`.webhook` (admission hooks), :mod:`.jobs` (job
reconciler), :mod:`.lifecycle` (workload controller), :mod:`.admissionchecks` (admission check
states, check-based evictions and the requeue backoff), :mod:`.provisioning` (the ProvisioningRequest
admission check controller), :mod:`.podsready` (waitForPodsReady), :mod:`.controller` (wiring,
scheduler, queue status) and :mod:`.visibility` (the pending-workloads API).

:mod:`.fairsharing` (cohort fair sharing) and :mod:`.admissionfairsharing` (Admission Fair Sharing),
on through the control plane's options, and :mod:`.topology` (topology-aware scheduling for flavors with
a ``topologyName``) plug into the engine and the controller.

Elastic RayClusters (``kueue.x-k8s.io/elastic-job: "true"``, Kueue's ``ElasticJobsViaWorkloadSlices``)
change size by Workload slices (:mod:`.slices`, :mod:`.elastic`): a scale-down in place, a scale-up as a
new slice that queues for its delta. Not emulated: MultiKueue and custom admission check controllers,
TAS pod slices and leader groups, partial admission (and a slice's ``minCount``), PriorityClass-based
priorities. Deliberate
differences: a ``Pending`` event is recorded when the message changes rather than on every
scheduling attempt, and a priority-class label naming no WorkloadPriorityClass gives an
``ErrWorkloadCompose`` event on the job (upstream only logs the error).
"""

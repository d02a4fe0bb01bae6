"""Kueue v0.19.2's own scheduler and preemption cases, re-told as data and run against the engine.

Each file in ``cases/`` is one upstream test case (``upstream:`` names the file, the test and the
case), written in our own schema: the API objects (ResourceFlavors, ClusterQueues with cohorts,
quotas, borrowing and lending limits, preemption and queueing settings, namespace selectors,
LocalQueues, Workloads created directly, some already holding quota) and the steps, each with the
observable outcome Kueue reaches (who holds quota in which ClusterQueue and flavor, who was
preempted and why). ``fixture:`` pulls in a shared set of objects from ``fixtures/`` (the objects
an upstream test function shares among its cases). A case the engine does not pass yet carries
``xfail: <why>`` and runs as a strict xfail, so it turns red the day it starts passing.

The cases run on the pure admission engine (:func:`admission_pass`), the same code the local
plane's Kueue controller runs on every reconcile; a small driver here writes each pass's decisions
back the way the controller does (admission, eviction releasing quota at once).

Schema (all keys optional but ``upstream`` and ``expect``/``steps``)::

    flavors: [name | {name, taints: [...], nodeLabels: {...}}]
    namespaces: {ns: {label: value}}
    cohorts: {name: {parent: name, groups: [...]}}
    clusterQueues: {name: {cohort, strategy, selector: {label: [values]} | namespaceSelector,
                           preemption, fungibility, groups: [{flavor: {resource: quota}}]}}
        quota: nominal | [nominal, borrowingLimit, lendingLimit] (null for none)
    localQueues: {ns/name: clusterQueue}
    workloads: [{name: ns/name, queue, priority, tolerations, created (seconds, an offset),
                 admissionChecks: {name: state},
                 requests: {resource: q} | podSets: {ps: [count, {r: q}]},
                 admitted: {cq, flavors: {resource: flavor} | podSets: {ps: {resource: flavor}}}}]
    cycles: n   (each pass stops after n scheduling cycles; 1 is one call of upstream's schedule(),
                 which is what its unit tables observe; default: until no queue offers a head)
    steps: [{create: [workloads], finish: [names], namespaces: {...}, cohorts: {...}, clusterQueues: {...},
             passes: n, cycles: n, expect: {...}}]
    expect: {admitted: {name: cq | {cq, <resource>: flavor}}, preempted: {name: reason},
             pending: [names], message: {name: text}}
"""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from rayqueue_local.controllers.kueue.amounts import format_amount, to_amount
from rayqueue_local.controllers.kueue.engine import admission_pass

HERE = Path(__file__).parent
CASES = sorted((HERE / "cases").glob("*.yaml"))
EPOCH = 1_800_000_000


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), path
    return data


def _merged(case: dict[str, Any]) -> dict[str, Any]:
    """The case with its fixture's objects under its own (the case wins on a name clash)."""
    name = case.get("fixture")
    if not name:
        return case
    base = _load(HERE / "fixtures" / f"{name}.yaml")
    out = dict(case)
    out["flavors"] = list(base.get("flavors") or []) + list(case.get("flavors") or [])
    for key in ("namespaces", "cohorts", "clusterQueues", "localQueues"):
        out[key] = {**(base.get(key) or {}), **(case.get(key) or {})}
    return out


def _ts(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _groups(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for group in groups or ():
        covered: list[str] = []
        flavors = []
        for flavor, resources in group.items():
            entries = []
            for res, quota in resources.items():
                if res not in covered:
                    covered.append(res)
                nominal, borrowing, lending = (
                    (list(quota) + [None, None])[:3]
                    if isinstance(quota, list)
                    else (
                        quota,
                        None,
                        None,
                    )
                )
                entry: dict[str, Any] = {"name": res, "nominalQuota": str(nominal)}
                if borrowing is not None:
                    entry["borrowingLimit"] = str(borrowing)
                if lending is not None:
                    entry["lendingLimit"] = str(lending)
                entries.append(entry)
            flavors.append({"name": flavor, "resources": entries})
        out.append({"coveredResources": covered, "flavors": flavors})
    return out


def _cluster_queue(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"resourceGroups": _groups(spec.get("groups") or [])}
    if "selector" in spec:
        body["namespaceSelector"] = {
            "matchExpressions": [
                {"key": k, "operator": "In", "values": list(v)} for k, v in spec["selector"].items()
            ]
        }
    else:
        body["namespaceSelector"] = spec.get("namespaceSelector", {})
    if spec.get("cohort"):
        body["cohortName"] = spec["cohort"]
    if spec.get("strategy"):
        body["queueingStrategy"] = spec["strategy"]
    if spec.get("preemption"):
        body["preemption"] = spec["preemption"]
    if spec.get("fungibility"):
        body["flavorFungibility"] = spec["fungibility"]
    if spec.get("stopPolicy"):
        body["stopPolicy"] = spec["stopPolicy"]
    return {"kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def _cohort(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"resourceGroups": _groups(spec.get("groups") or [])}
    if spec.get("parent"):
        body["parentName"] = spec["parent"]
    return {"kind": "Cohort", "metadata": {"name": name}, "spec": body}


def _pod_sets(spec: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    if "podSets" in spec:
        return [(name, int(count), dict(req)) for name, (count, req) in spec["podSets"].items()]
    return [("main", int(spec.get("count", 1)), dict(spec.get("requests") or {}))]


class World:
    """The case's objects and Workload dicts; :meth:`run_pass` applies a pass like the controller."""

    def __init__(self, case: dict[str, Any]) -> None:
        self.flavors = []
        for f in case.get("flavors") or []:
            f = {"name": f} if isinstance(f, str) else f
            spec = {k: v for k, v in f.items() if k != "name"}
            self.flavors.append({"kind": "ResourceFlavor", "metadata": {"name": f["name"]}, "spec": spec})
        self.namespaces = {ns: dict(labels or {}) for ns, labels in (case.get("namespaces") or {}).items()}
        self.cqs = [_cluster_queue(n, s or {}) for n, s in (case.get("clusterQueues") or {}).items()]
        self.cohorts = [_cohort(name, spec or {}) for name, spec in (case.get("cohorts") or {}).items()]
        self.lqs = []
        for key, cq in (case.get("localQueues") or {}).items():
            ns, name = key.split("/")
            self.lqs.append(
                {
                    "kind": "LocalQueue",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": {"clusterQueue": cq},
                }
            )
        self.workloads: dict[str, dict[str, Any]] = {}
        self.clock = EPOCH
        self.preempted: dict[str, str] = {}

    def create(self, spec: dict[str, Any]) -> None:
        ns, name = spec["name"].split("/")
        self.clock += 1
        pod_sets = _pod_sets(spec)
        wl: dict[str, Any] = {
            "kind": "Workload",
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": f"uid-{ns}-{name}",
                "creationTimestamp": _ts(self.clock + float(spec.get("created", 0))),
            },
            "spec": {
                "queueName": spec.get("queue", "main"),
                "priority": int(spec.get("priority", 0)),
                "podSets": [
                    {
                        "name": ps,
                        "count": count,
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "c",
                                        "resources": {"requests": {r: str(v) for r, v in req.items()}},
                                    }
                                ],
                                "tolerations": list(spec.get("tolerations") or []),
                            }
                        },
                    }
                    for ps, count, req in pod_sets
                ],
            },
            "status": {},
        }
        if spec.get("admissionChecks"):
            wl["status"]["admissionChecks"] = [
                {"name": name, "state": state, "message": "", "lastTransitionTime": _ts(EPOCH)}
                for name, state in spec["admissionChecks"].items()
            ]
        if spec.get("admitted"):
            adm = spec["admitted"]
            per_pod_set = adm.get("podSets") or {}
            wl["status"]["admission"] = {
                "clusterQueue": adm["cq"],
                "podSetAssignments": [
                    {
                        "name": ps,
                        "flavors": {r: flavors[r] for r in req if r in flavors},
                        "resourceUsage": {
                            r: format_amount(r, to_amount(r, v) * count)
                            for r, v in req.items()
                            if r in flavors
                        },
                        "count": count,
                    }
                    for ps, count, req in pod_sets
                    for flavors in [per_pod_set.get(ps) or adm.get("flavors") or {}]
                ],
            }
            self._condition(wl, "QuotaReserved", "True", "QuotaReserved", "")
        self.workloads[spec["name"]] = wl

    @staticmethod
    def _condition(wl: dict[str, Any], ctype: str, status: str, reason: str, message: str) -> None:
        conditions = wl.setdefault("status", {}).setdefault("conditions", [])
        conditions[:] = [c for c in conditions if c["type"] != ctype]
        conditions.append(
            {
                "type": ctype,
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": _ts(EPOCH),
            }
        )

    def update(self, step: dict[str, Any]) -> None:
        """A step's changes to the API objects: namespace labels, Cohorts and ClusterQueues added or
        replaced."""
        for ns, labels in (step.get("namespaces") or {}).items():
            self.namespaces[ns] = dict(labels or {})
        for name, spec in (step.get("cohorts") or {}).items():
            self.cohorts = [c for c in self.cohorts if c["metadata"]["name"] != name]
            self.cohorts.append(_cohort(name, spec or {}))
        for name, spec in (step.get("clusterQueues") or {}).items():
            self.cqs = [cq for cq in self.cqs if cq["metadata"]["name"] != name]
            self.cqs.append(_cluster_queue(name, spec or {}))

    def finish(self, key: str) -> None:
        wl = self.workloads[key]
        self._condition(wl, "Finished", "True", "Succeeded", "")
        wl["status"].pop("admission", None)

    def run_pass(self, cycles: int | None = None) -> None:
        self.clock += 1
        result = admission_pass(
            cluster_queues=self.cqs,
            cohorts=self.cohorts,
            resource_flavors=self.flavors,
            local_queues=self.lqs,
            workloads=[copy.deepcopy(wl) for wl in self.workloads.values()],
            namespaces=self.namespaces,
            now=float(self.clock),
            max_cycles=cycles,
        )
        key = {(wl["metadata"]["namespace"], wl["metadata"]["name"]): k for k, wl in self.workloads.items()}
        for p in result.pending:
            self._condition(
                self.workloads[key[p.workload.key]], "QuotaReserved", "False", p.reason, p.message
            )
        for a in result.admitted:
            wl = self.workloads[key[a.workload.key]]
            wl["status"]["admission"] = a.admission
            self._condition(wl, "QuotaReserved", "True", "QuotaReserved", "")
            self._condition(wl, "Evicted", "False", "QuotaReserved", "")
        for e in result.evicted:
            name = key[e.workload.key]
            wl = self.workloads[name]
            self.preempted[name] = e.preemption_reason or e.reason
            self._condition(wl, "Evicted", "True", e.reason, e.message)
            wl["status"].pop("admission", None)
            self._condition(wl, "QuotaReserved", "False", "Pending", e.message)

    def admitted(self) -> dict[str, dict[str, Any]]:
        """Each Workload holding quota: its ClusterQueue and, per pod set, resource -> flavor."""
        out = {}
        for name, wl in self.workloads.items():
            adm = (wl.get("status") or {}).get("admission")
            if adm:
                out[name] = {
                    "cq": adm["clusterQueue"],
                    "podSets": {
                        psa["name"]: dict(psa.get("flavors") or {}) for psa in adm["podSetAssignments"]
                    },
                }
        return out

    def message(self, name: str) -> str:
        for cond in (self.workloads[name].get("status") or {}).get("conditions") or ():
            if cond["type"] == "QuotaReserved":
                return str(cond["message"])
        return ""


def _matches(want: Any, got: dict[str, Any]) -> bool:
    if isinstance(want, str):
        cq, _, flavor = want.partition("/")
        if got["cq"] != cq:
            return False
        return not flavor or all(set(f.values()) <= {flavor} for f in got["podSets"].values())
    if got["cq"] != want["cq"]:
        return False
    if "podSets" in want:
        return all(got["podSets"].get(ps) == flavors for ps, flavors in want["podSets"].items())
    wanted = {r: f for r, f in want.items() if r != "cq"}
    for res, flavor in wanted.items():
        chosen = [flavors[res] for flavors in got["podSets"].values() if res in flavors]
        if not chosen or set(chosen) != {flavor}:
            return False
    return True


def _check(world: World, expect: dict[str, Any], where: str) -> None:
    got = world.admitted()
    want = expect.get("admitted") or {}
    assert set(got) == set(want), f"{where}: admitted {sorted(got)}, want {sorted(want)}"
    for name, spec in want.items():
        assert _matches(spec, got[name]), f"{where}: {name} admitted as {got[name]}, want {spec}"
    assert world.preempted == dict(expect.get("preempted") or {}), f"{where}: preempted {world.preempted}"
    for name in expect.get("pending") or ():
        assert name not in got, f"{where}: {name} should be pending"
    for name, text in (expect.get("message") or {}).items():
        assert world.message(name) == text, f"{where}: {name}: {world.message(name)!r}"


def _params() -> list[Any]:
    out = []
    for path in CASES:
        case = _load(path)
        marks = []
        if case.get("xfail"):
            marks.append(pytest.mark.xfail(reason=str(case["xfail"]), strict=True))
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


def test_corpus_is_not_empty_and_every_case_names_its_upstream_source() -> None:
    assert len(CASES) >= 20
    for path in CASES:
        up = _load(path).get("upstream") or {}
        assert up.get("file") and up.get("test") and up.get("case"), path.name


@pytest.mark.parametrize("path", _params())
def test_upstream_case(path: Path) -> None:
    case = _merged(_load(path))
    world = World(case)
    for spec in case.get("workloads") or ():
        world.create(spec)
    steps = case.get("steps") or [{"passes": case.get("passes", 1), "expect": case.get("expect") or {}}]
    default_cycles = case.get("cycles")
    for number, step in enumerate(steps, 1):
        for spec in step.get("create") or ():
            world.create(spec)
        world.update(step)
        for name in step.get("finish") or ():
            world.finish(name)
        world.preempted = {}
        for _ in range(int(step.get("passes", 1))):
            world.run_pass(step.get("cycles", default_cycles))
        _check(world, step.get("expect") or {}, f"step {number}")

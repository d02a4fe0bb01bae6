"""The admin builders for admission checks: AdmissionCheck, ProvisioningRequestConfig and a ClusterQueue's
``admissionChecksStrategy`` render offline, validate against the real CRD schemas, and reject bad input
(naming the field) before any I/O. Seed 002's objects are built from them (see
tests/local/controllers/kueue/test_scenarios_match_sdk.py for the equality with the local scenario)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from crd_schema import validate

from rayqueue_local.scenarios import seed002_queues
from rayqueue_sdk.errors import ConfigError
from rayqueue_sdk.manifests import kueue as k


def test_seed002_scenario_objects_validate_against_the_crds(crd_dir: Path) -> None:
    for obj in seed002_queues(backoff_base_seconds=1, backoff_max_seconds=8):
        validate(obj, crd_dir)


def test_builders_validate_against_the_crds(crd_dir: Path) -> None:
    objects = [
        k.admission_check("sample-prov", parameters="prov-test-config"),
        k.admission_check("custom", controller_name="example.com/my-check"),
        k.provisioning_request_config(
            "prov-test-config",
            provisioning_class_name="check-capacity.autoscaling.x-k8s.io",
            managed_resources=["cpu", "nvidia.com/gpu"],
            backoff_limit_count=0,
            backoff_base_seconds=5,
            backoff_max_seconds=60,
            parameters={"ValidUntilSeconds": "60"},
        ),
        k.cluster_queue(
            "cq",
            resource_groups=[k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 4}))],
            admission_checks=[k.admission_check_rule("sample-prov"), k.admission_check_rule("custom")],
        ),
    ]
    for obj in objects:
        validate(obj, crd_dir)
    assert objects[3]["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "sample-prov"}, {"name": "custom"}]
    }


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: k.admission_check("Bad_Name"), "name"),
        (lambda: k.admission_check("ok", controller_name=""), "controller_name"),
        (lambda: k.admission_check("ok", parameters="Not A Name"), "parameters"),
        (lambda: k.admission_check("ok", parameters="p", parameters_kind="9kind"), "parameters_kind"),
        (
            lambda: k.provisioning_request_config("p", provisioning_class_name="Bad Class"),
            "provisioning_class_name",
        ),
        (
            lambda: k.provisioning_request_config("p", provisioning_class_name="c", backoff_limit_count=-1),
            "backoff_limit_count",
        ),
        (
            lambda: k.provisioning_request_config(
                "p", provisioning_class_name="c", backoff_base_seconds=True
            ),
            "backoff_base_seconds",
        ),
        (
            lambda: k.provisioning_request_config(
                "p", provisioning_class_name="c", managed_resources=["cpu", "cpu"]
            ),
            "managed_resources",
        ),
        (lambda: k.admission_check_rule("ok", on_flavors=["Bad_Flavor"]), "on_flavors"),
        (
            lambda: k.cluster_queue(
                "cq",
                resource_groups=[k.resource_group(k.flavor_quotas("default-flavor", {"cpu": 1}))],
                admission_checks=[k.admission_check_rule("c", on_flavors=["gpu-flavor"])],
            ),
            "admission_checks[0].onFlavors",
        ),
    ],
)
def test_bad_input_names_the_field(build: Any, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    assert info.value.field == field

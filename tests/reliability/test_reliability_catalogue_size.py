"""The catalogue is one data set of at least 200 distinct cases across every section the issue names."""

from __future__ import annotations

from reliability_catalogue import CLI_CASES, HTTP_CASES, NAME_CASES, SDK_CALL_CASES, SDK_CASES


def test_catalogue_has_at_least_200_distinct_cases_in_every_section() -> None:
    ids = (
        [f"sdk:{c[0]}" for c in SDK_CASES]
        + [f"sdk:{c[0]}" for c in SDK_CALL_CASES]
        + [f"names:{c[0]}" for c in NAME_CASES]
        + [f"cli:{c.id}" for c in CLI_CASES]
        + [f"http:{c.id}" for c in HTTP_CASES]
    )
    assert len(ids) == len(set(ids)) >= 200
    sections = {"sdk": SDK_CASES, "names": NAME_CASES, "cli": CLI_CASES, "http": HTTP_CASES}
    assert all(len(cases) >= 30 for cases in sections.values()), {k: len(v) for k, v in sections.items()}
    print(f"catalogue: {len(ids)} cases ({', '.join(f'{k} {len(v)}' for k, v in sections.items())})")

"""A fixed, deterministic slice of the exactness fuzz (fuzz_cases.py): seeds 0..SEEDS-1, every
generator with every engine (rotated by seed, SEEDS / 64 times each), float32 and float64, 2D
and 3D, one thread. Each case is compared with the float64 oracle on query_pairs, neighbor_lists
(sorted, with distances), count_neighbors_per_point, query_ball_point and the self
sparse_distance_matrix. Longer runs: python/fuzz_exactness.py."""

import numpy as np
import pytest

import fuzz_cases

SEEDS = 1024  # 16 rounds of the 64 (generator, engine) combinations; about 6 s on one core


def seeds_of(generator_number: int) -> range:
    return range(generator_number, SEEDS, len(fuzz_cases.GENERATORS))


def describe(plan, problems) -> str:
    return (f"seed {plan.seed}, generator {plan.generator}, engine {plan.engine}, "
            f"dtype {plan.dtype.__name__}, dim {plan.dim}: " + "; ".join(problems[:3]))


@pytest.mark.parametrize("generator_number", range(len(fuzz_cases.GENERATORS)),
                         ids=[g.__name__ for g in fuzz_cases.GENERATORS])
def test_fixed_seeds_equal_oracle(generator_number):
    failures, refused = [], 0
    for seed in seeds_of(generator_number):
        plan = fuzz_cases.plan(seed)
        problems = fuzz_cases.check_case(plan.case, plan.engine, 1, plan.dtype,
                                         np.random.default_rng(seed))
        if problems is None:
            refused += 1
        elif problems:
            failures.append(describe(plan, problems))
    assert not failures, "\n".join(failures)
    assert refused <= len(seeds_of(generator_number)) // 4, f"{refused} cases refused"

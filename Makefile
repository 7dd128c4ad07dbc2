# ubot_lidar_sim: `make demo` and `make test` bootstrap everything on first use.
# ROS_DISTRO=jazzy (make build|test|demo|bench ROS_DISTRO=jazzy) builds and tests against the ROS 2
# Jazzy wheels in their own .venv-jazzy, build-jazzy/ and install-jazzy/ (scripts/distro.sh); the
# default is Kilted. A ROS_DISTRO given on make's command line reaches the scripts' environment.
# TEST_PART=release_dependent: make test runs only the tests that depend on the ROS release
# (test/release_part.py), as .ci/run does on Jazzy.
SHELL := /bin/bash
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST
DEMO_SECONDS ?= 30
DEMO_PRESET ?= velodyne_vlp16
DEMO_ROBOTS ?= 1
ENV := source scripts/env.sh >/dev/null &&

.PHONY: build test test-under-load test-generic-cpu demo bench soak clean bootstrap

bootstrap:
	@scripts/bootstrap.sh --no-build

build:
	@scripts/bootstrap.sh

test: build
	@scripts/run_tests.sh

# make test with two CPU hogs on the same cores for its whole length (killed at its end).
test-under-load: build
	@scripts/test_under_load.sh

# The core tests with numba compiled for a generic x86-64 (make test runs it too).
test-generic-cpu: build
	@scripts/test_generic_cpu.sh

demo: build
	@$(ENV) DEMO_SECONDS=$(DEMO_SECONDS) DEMO_PRESET=$(DEMO_PRESET) DEMO_ROBOTS=$(DEMO_ROBOTS) scripts/demo.sh

bench: build
	@$(ENV) pip install -q --disable-pip-version-check -r requirements-bench.txt -c constraints.txt \
	  && python benchmarks/run_all.py --out out/bench.json

soak: build
	@$(ENV) python -m pytest -q test/reliability -m soak --soak-seconds $${SOAK_SECONDS:-600}

clean:
	rm -rf build install log out .ws .venv build-jazzy install-jazzy log-jazzy .ws-jazzy .venv-jazzy

# tests/deploy: the Slurm and Kubernetes deployments of sharded campaigns (deploy/). Included by
# tests/CMakeLists.txt; the scripts say what each test does.
if(NOT TARGET kparity_cli)
  return()
endif()
set(deploy_dir ${CMAKE_CURRENT_SOURCE_DIR}/deploy)

# --shard auto: JOB_COMPLETION_INDEX + KPARITY_SHARD_COUNT and the Slurm array variables -> shard i/n.
add_test(NAME deploy.shard_env COMMAND python3 ${deploy_dir}/shard_env_test.py $<TARGET_FILE:kparity_cli>)
set_tests_properties(deploy.shard_env PROPERTIES LABELS "cpu;deploy" TIMEOUT 300)

# The manifests: strict Kubernetes schemas (1.29 and newest) and the campaign's invariants.
add_test(NAME deploy.k8s.manifests
         COMMAND bash ${deploy_dir}/with_python_deps.sh ${deploy_dir}/check_k8s_manifests.py)
# The Jobs' container commands run locally, shard by shard, merged = unsharded.
add_test(NAME deploy.k8s.pods
         COMMAND bash ${deploy_dir}/with_python_deps.sh ${deploy_dir}/k8s_pods_test.py $<TARGET_FILE:kparity_cli>)
set_tests_properties(deploy.k8s.manifests deploy.k8s.pods PROPERTIES LABELS "cpu;deploy" TIMEOUT 300)
# The pods run the Jobs' campaigns: both cores. Both tests take the lock the browser test shares
# (tests/site/CMakeLists.txt), so that neither starves the other on a loaded machine (issue 32).
set_tests_properties(deploy.k8s.pods PROPERTIES PROCESSORS 2)
set_tests_properties(deploy.k8s.manifests deploy.k8s.pods PROPERTIES RESOURCE_LOCK kparity_heavy_processes)

# A real single-node Slurm (root; installs slurm-wlm and munge when missing), 4-shard array + merge.
add_test(NAME deploy.slurm.cluster COMMAND bash ${deploy_dir}/slurm_test.sh $<TARGET_FILE:kparity_cli>)
set_tests_properties(deploy.slurm.cluster PROPERTIES LABELS "cpu;deploy;slurm" TIMEOUT 600 SKIP_RETURN_CODE 77
                                                    PROCESSORS 2 RESOURCE_LOCK kparity_heavy_processes)

# ctest: mpi_triad on 1, 2 and 3 ranks with each CPU backend in BACKENDS; every run must
# verify (c bit for bit against one process) and print the same checksum line.
# -D MPIEXEC=<mpirun> EXAMPLE=<mpi_triad> BACKENDS=<list>
set(n 1000003)     # odd: the last rank's last block is short
set(block 4099)    # blocks do not divide n, ranks hold whole blocks
set(expected "")
foreach(backend IN LISTS BACKENDS)
  foreach(ranks 1 2 3)
    execute_process(COMMAND ${MPIEXEC} --oversubscribe -np ${ranks} ${EXAMPLE} --n ${n} --block ${block} --reps 2
                            --backend ${backend} --verify
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
    message("${backend}, ${ranks} rank(s):\n${out}${err}")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "mpi_triad on ${ranks} rank(s) with ${backend} exited with ${rc}")
    endif()
    if(NOT out MATCHES "verify: c is bit-identical")
      message(FATAL_ERROR "mpi_triad on ${ranks} rank(s) with ${backend}: no verification line")
    endif()
    string(REGEX MATCH "checksum: [^\n]*" checksum "${out}")
    if(checksum STREQUAL "")
      message(FATAL_ERROR "mpi_triad on ${ranks} rank(s) with ${backend}: no checksum line")
    endif()
    if(expected STREQUAL "")
      set(expected "${checksum}")
    elseif(NOT checksum STREQUAL expected)
      message(FATAL_ERROR "checksums differ: '${checksum}' (${backend}, ${ranks} ranks) vs '${expected}'")
    endif()
  endforeach()
endforeach()
message("all runs: ${expected}")

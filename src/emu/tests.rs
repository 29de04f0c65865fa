//! Model-level tests of the emulator: hand-computed answers for sharing, ECMP collisions, defects, perftest and nccl-tests outputs. Not a place for parser tests.

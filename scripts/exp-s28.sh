#!/usr/bin/env bash
# Session 28 device runs; logs in $OUT.
#   BINS=build/bins28a.tar.xz PART=1,5,7,2 bash scripts/exp-s28.sh
# PART=1 (joinery_gpu_tests): the wrapped sums' test.
# PART=5 (joinery_gpu_tests): memcheck and racecheck over the wrapped sums' test.
# PART=7 (joinery, joinery_exp_multicast): Nsight Compute over the library's wsum_kernel and the
# probe's team_w_kernel (SUMW, team of 4) at g = 2^16, 2^28 rows, clocks left alone.
# PART=2 (joinery): hash at g <= 2^16 with the wrapped sums on and off (JOINERY_DENSE_WSUM=0),
# alternated twice with int32 keys, once with int64 keys.
# PART=3 (joinery): issue 7's targets at g <= 2^16: hash, PGB-TR and automatic, int32 and int64.
# PART=4 (joinery_conformance_tests): the conformance suite's GPU group-bys.
# PARTs 6, 9, 12, 13 and 15 timed temporary builds of dense_wsum.cu (forms of the kernel chosen
# by JOINERY_WSUM_* variables) that are not in the tree: with the committed code those variables
# do nothing. Their logs are bench/results/nvidia-h200/gb-s28-*; BENCHMARKS.md says what each
# form was.
set -u
source "$(dirname "$0")/exp-lib.sh" "${BINS:-build/bins28a.tar.xz}"
J=/tmp/b/joinery
T=/tmp/b/joinery_gpu_tests
WSUM_TEST='GpuHashGroupby.DenseTierWrappedSums'
NCU_SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section InstructionStats --section ComputeWorkloadAnalysis --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,smsp__inst_executed_op_shared_atom.sum,dram__bytes_read.sum,lts__t_sector_op_read_hit_rate.pct"
case ",${PART:-1}," in *,1,*)
  step wsum-test tests 150 $T --gtest_filter="$WSUM_TEST"
  ;;
esac
case ",${PART:-1}," in *,5,*)
  step memcheck-wsum sanitizer 200 compute-sanitizer --tool memcheck --report-api-errors no $T --gtest_filter="$WSUM_TEST"
  step racecheck-wsum sanitizer 200 compute-sanitizer --tool racecheck $T --gtest_filter="$WSUM_TEST"
  ;;
esac
case ",${PART:-1}," in *,7,*)
  step ncu-lib ncu 200 ncu --clock-control none -k regex:wsum_kernel -c 2 $NCU_SECTIONS $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 1 --warmup 0 --out /tmp/ncu-lib.jsonl
  step ncu-probe ncu 120 env PROBE_BIG_ONLY=1 ncu --clock-control none -k regex:team_w_kernel -c 1 $NCU_SECTIONS /tmp/b/joinery_exp_multicast xchg
  ;;
esac
case ",${PART:-1}," in *,2,*)
  for i in 1 2; do
    for w in 1 0; do
      step "ab-w$w-$i" bench 100 env JOINERY_DENSE_WSUM=$w $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-s28-wsum$w-int32.jsonl"
    done
  done
  for w in 1 0; do
    step "ab64-w$w" bench 100 env JOINERY_DENSE_WSUM=$w $J bench gpu-groupby --algorithm hash --key-type int64 --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-s28-wsum$w-int64.jsonl"
  done
  ;;
esac
# PART=6 (joinery, a temporary build): the wrapped sums' stop flag read by every warp each tile
# (POLL=1), one warp a tile in turn (POLL=32) or never (POLL=1000), with and without the
# returned count (NORET=1), alternated twice; Nsight Compute over POLL=32.
case ",${PART:-1}," in *,6,*)
  for i in 1 2; do
    for v in "1 0" "32 0" "1000 0" "32 1" "1000 1"; do
      set -- $v
      step "poll$1-noret$2-$i" bench 100 env JOINERY_WSUM_POLL=$1 JOINERY_WSUM_NORET=$2 $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-s28-poll$1-noret$2.jsonl"
    done
  done
  step ncu-poll32 ncu 200 env JOINERY_WSUM_POLL=32 ncu --clock-control none -k regex:wsum_kernel -s 1 -c 1 $NCU_SECTIONS $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 1 --warmup 0 --out /tmp/ncu-lib.jsonl
  ;;
esac
# PART=8: per-instruction stall samples (Nsight Compute's source page, SASS) of the library's
# wsum_kernel (POLL=32) and the probe's team_w_kernel at g = 2^16.
case ",${PART:-1}," in *,8,*)
  STALLS="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
  step src-lib ncu 200 env JOINERY_WSUM_POLL=32 ncu --clock-control none -k regex:wsum_kernel -s 1 -c 1 --section SourceCounters --section WarpStateStats $STALLS -o /tmp/lib $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 1 --warmup 0 --out /tmp/ncu-lib.jsonl
  step src-probe ncu 120 env PROBE_BIG_ONLY=1 ncu --clock-control none -k regex:team_w_kernel -c 1 --section SourceCounters --section WarpStateStats $STALLS -o /tmp/probe /tmp/b/joinery_exp_multicast xchg
  step src-print ncu 60 sh -c "ncu -i /tmp/lib.ncu-rep --page source --csv --print-source sass > $OUT/src-lib.csv; ncu -i /tmp/probe.ncu-rep --page source --csv --print-source sass > $OUT/src-probe.csv; ncu -i /tmp/lib.ncu-rep --page details >> $OUT/ncu.log; ncu -i /tmp/probe.ncu-rep --page details >> $OUT/ncu.log"
  ;;
esac
# PART=9 (joinery, a temporary build): forms of the wrapped sums' tile (JOINERY_WSUM_V: 1 no
# returned count, 2 window test on a thread's first row only, 4 no window test), alternated
# twice; 8-byte keys with teams of up to 2 (partials at 2^16) or 4 (JOINERY_WSUM_WIDE).
case ",${PART:-1}," in *,9,*)
  for i in 1 2; do
    for v in 0 1 2 3 4 5; do
      step "v$v-$i" bench 100 env JOINERY_WSUM_V=$v $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-v$v.jsonl"
    done
  done
  for i in 1 2; do
    for t in 2 4; do
      step "wide$t-$i" bench 100 env JOINERY_WSUM_WIDE=$t $J bench gpu-groupby --algorithm hash --key-type int64 --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-wide$t.jsonl"
    done
  done
  for f in /tmp/gb-s28-v*.jsonl /tmp/gb-s28-wide*.jsonl; do sed "s|^|$(basename $f .jsonl) |" "$f"; done > "$OUT/gb-s28-variants.txt"
  ;;
esac
case ",${PART:-1}," in *,3,*)
  step gb-u32 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,automatic --groups 2^16 --runs 5 --warmup 1 --out "$OUT/gb-s28-uniform-int32.jsonl"
  step gb-u64 bench 200 $J bench gpu-groupby --algorithm hash,partition_transformed,automatic --key-type int64 --groups 2^16 --runs 5 --warmup 1 --out "$OUT/gb-s28-uniform-int64.jsonl"
  ;;
esac
case ",${PART:-1}," in *,4,*)
  step conf-gb tests 150 /tmp/b/joinery_conformance_tests --gtest_filter='*GroupbyConformance*gpu*'
  ;;
esac
# PART=11 (joinery): hash under Zipf 0.5 and 1.0 to g = 2^16 with the wrapped sums on and off
# (the early stop's cost where hot groups wrap their counts).
case ",${PART:-1}," in *,11,*)
  for z in 0.5 1.0; do
    for w in 1 0; do
      step "zipf$z-w$w" bench 120 env JOINERY_DENSE_WSUM=$w $J bench gpu-groupby --algorithm hash --zipf $z --groups 2^16 --runs 3 --warmup 1 --out "$OUT/gb-s28-zipf.jsonl"
    done
  done
  ;;
esac
# PART=12 (joinery, a temporary build): a count read back on one tile of JOINERY_WSUM_PROBE (4,
# 8, 16; 0 never), alternated twice; the fixed costs (2^20 and 2^22 rows, wrapped sums on and
# off); every kernel's duration (Nsight Compute) in one run to g = 2^16.
case ",${PART:-1}," in *,12,*)
  for i in 1 2; do
    for q in 4 8 16 0; do
      step "probe$q-$i" bench 100 env JOINERY_WSUM_PROBE=$q $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-probe$q.jsonl"
    done
  done
  for r in 2^20 2^22; do
    for w in 1 0; do
      step "rows$r-w$w" bench 100 env JOINERY_DENSE_WSUM=$w $J bench gpu-groupby --algorithm hash --rows $r --groups 2^16 --runs 9 --warmup 2 --out "/tmp/gb-s28-small.jsonl"
    done
  done
  for f in /tmp/gb-s28-probe*.jsonl /tmp/gb-s28-small.jsonl; do sed "s|^|$(basename $f .jsonl) |" "$f"; done > "$OUT/gb-s28-probe-small.txt"
  step ncu-all ncu 200 ncu --clock-control none --metrics gpu__time_duration.sum $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 1 --warmup 0 --out /tmp/ncu-all.jsonl
  ;;
esac
# PART=13 (joinery, a temporary build): counts read with a plain (relaxed) shared load on one
# tile of JOINERY_WSUM_PROBE (1, 4, 32; 0 never), alternated twice; Zipf 0.5 and 1.0 with the
# default and with the wrapped sums off.
case ",${PART:-1}," in *,13,*)
  for i in 1 2; do
    for q in 1 4 32 0; do
      step "load$q-$i" bench 100 env JOINERY_WSUM_PROBE=$q $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-load$q.jsonl"
    done
  done
  for z in 0.5 1.0; do
    for w in 1 0; do
      step "zipf$z-w$w" bench 120 env JOINERY_DENSE_WSUM=$w $J bench gpu-groupby --algorithm hash --zipf $z --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-zipf-load.jsonl"
    done
  done
  for f in /tmp/gb-s28-load*.jsonl /tmp/gb-s28-zipf-load.jsonl; do sed "s|^|$(basename $f .jsonl) |" "$f"; done > "$OUT/gb-s28-load.txt"
  ;;
esac
# PART=14 (joinery, and joinery_old from $OLD_BINS: the build of 5db376b): the final kernel
# against 5db376b's and against the wrapped sums off, alternated twice (int32), once (int64);
# the fixed costs at 2^20 rows.
case ",${PART:-1}," in *,14,*)
  tar xJf "${OLD_BINS:-build/bins28old.tar.xz}" -C /tmp/b
  for i in 1 2; do
    step "old-$i" bench 100 /tmp/b/joinery_old bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-old-int32.jsonl"
    step "new-$i" bench 100 $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-new-int32.jsonl"
    step "off-$i" bench 100 env JOINERY_DENSE_WSUM=0 $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-off-int32.jsonl"
  done
  step "old64" bench 100 /tmp/b/joinery_old bench gpu-groupby --algorithm hash --key-type int64 --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-old-int64.jsonl"
  step "new64" bench 100 $J bench gpu-groupby --algorithm hash --key-type int64 --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-new-int64.jsonl"
  step "off64" bench 100 env JOINERY_DENSE_WSUM=0 $J bench gpu-groupby --algorithm hash --key-type int64 --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-off-int64.jsonl"
  step "old-small" bench 100 /tmp/b/joinery_old bench gpu-groupby --algorithm hash --rows 2^20 --groups 2^16 --runs 9 --warmup 2 --out "/tmp/gb-s28-old-small.jsonl"
  step "new-small" bench 100 $J bench gpu-groupby --algorithm hash --rows 2^20 --groups 2^16 --runs 9 --warmup 2 --out "/tmp/gb-s28-new-small.jsonl"
  for f in /tmp/gb-s28-old*.jsonl /tmp/gb-s28-new*.jsonl /tmp/gb-s28-off*.jsonl; do sed "s|^|$(basename $f .jsonl) |" "$f"; done > "$OUT/gb-s28-final.txt"
  step ncu-new ncu 120 ncu --clock-control none -k regex:"wsum_kernel|dense_sample" --metrics gpu__time_duration.sum $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 1 --warmup 0 --out /tmp/ncu-new.jsonl
  ;;
esac
# PART=15 (joinery, a temporary build with the kernel's forms as template instances picked by
# environment): JOINERY_WSUM_PROBE (0 returned count on a second form of the tile, 1 plain load,
# 2 none) x JOINERY_WSUM_DECODE (1, 8) x JOINERY_WSUM_OLDSLOTS (1: 17,720 slots), alternated
# twice, int32 keys.
case ",${PART:-1}," in *,15,*)
  tar xJf "${OLD_BINS:-build/bins28old.tar.xz}" -C /tmp/b
  for i in 1 2; do
    step "old-$i" bench 100 /tmp/b/joinery_old bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-pold.jsonl"
    for v in "0 1 1" "0 8 0" "1 8 0" "2 8 0" "0 1 0" "1 1 1"; do
      set -- $v
      step "p$1-d$2-o$3-$i" bench 100 env JOINERY_WSUM_PROBE=$1 JOINERY_WSUM_DECODE=$2 JOINERY_WSUM_OLDSLOTS=$3 $J bench gpu-groupby --algorithm hash --groups 2^16 --runs 3 --warmup 1 --out "/tmp/gb-s28-p$1-d$2-o$3.jsonl"
    done
  done
  for f in /tmp/gb-s28-p*.jsonl; do sed "s|^|$(basename $f .jsonl) |" "$f"; done > "$OUT/gb-s28-forms.txt"
  ;;
esac
# PART=10 (joinery_gpu_tests): every GPU group-by test.
case ",${PART:-1}," in *,10,*)
  step gb-tests tests 200 $T --gtest_filter="GpuHashGroupby.*:Algorithms/GpuGroupby.*:GpuPartitionGroupby.*:GpuGroupbyRegistry.*:GpuDictionaryGroupby.*:Lo32Sum.*"
  ;;
esac
cat "$S"

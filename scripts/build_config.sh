# Sourced by setup.sh and test.sh: the build folder and configure arguments of the mode that
# WEFT_FUZZ and WEFT_SANITIZE name. WEFT_FUZZ=1: the libFuzzer targets (build-fuzz/).
# WEFT_SANITIZE unset, 0 or OFF: none (build/); 1 or ON: AddressSanitizer + UBSan
# (build-asan/); thread: ThreadSanitizer (build-tsan/). WEFT_BUILD_DIR overrides the folder.
if [[ "${WEFT_FUZZ:-0}" == 1 ]]; then
  sanitize=fuzz; build="${WEFT_BUILD_DIR:-build-fuzz}"; config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_FUZZ=ON)
else
  case "${WEFT_SANITIZE:-0}" in
    0|OFF|off) sanitize=none; build="${WEFT_BUILD_DIR:-build}"; config=(-DCMAKE_BUILD_TYPE=Release) ;;
    1|ON|on) sanitize=address; build="${WEFT_BUILD_DIR:-build-asan}"; config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_SANITIZE=ON) ;;
    thread) sanitize=thread; build="${WEFT_BUILD_DIR:-build-tsan}"; config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_SANITIZE=thread) ;;
    *) echo "WEFT_SANITIZE=${WEFT_SANITIZE}: expected 0, 1 (AddressSanitizer + UBSan) or thread" >&2; exit 1 ;;
  esac
fi

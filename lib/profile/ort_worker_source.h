// The text of lib/profile/ort_worker.py, compiled in so that graphsub runs from any directory.
#pragma once

namespace graphsub::profile {

/// The Python source of the onnxruntime worker.
const char* ort_worker_source();

}  // namespace graphsub::profile

// simpler's "backend/sdma/sdma_completion_kernel.h" (SdmaTget / SdmaTput and
// their completion records, between dies).
#pragma once
#error "pfsim lacks \"backend/sdma/sdma_completion_kernel.h\": SDMA transfers between dies (SdmaTget, SdmaTput, send_request_entry) are not modeled; pfsim's deferred completion is in \"pto_async_kernel_api.h\""

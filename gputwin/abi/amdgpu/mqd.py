"""The compute queue's memory queue descriptor and the HQD register fields the AM driver programs from it.

`v11_compute_mqd` is struct v11_compute_mqd of Linux amdgpu's include/v11_structs.h (512 dwords, one name per
dword). Its dwords HQD_IMAGE_FIRST.. (cp_mqd_base_addr_lo .. cp_hqd_pq_wptr_hi) are the image of the
consecutive HQD registers regCP_MQD_BASE_ADDR .. regCP_HQD_PQ_WPTR_HI, in the same order on GC 11 and GC 12,
which is how amdgpu's hqd_load writes them. Field positions from gc_11_0_0_sh_mask.h (unchanged in 12.0)."""
from __future__ import annotations

import ctypes

from gputwin.abi.bitfield import Field

_FIELDS = """
    header compute_dispatch_initiator compute_dim_x compute_dim_y compute_dim_z compute_start_x compute_start_y
    compute_start_z compute_num_thread_x compute_num_thread_y compute_num_thread_z compute_pipelinestat_enable
    compute_perfcount_enable compute_pgm_lo compute_pgm_hi compute_dispatch_pkt_addr_lo
    compute_dispatch_pkt_addr_hi compute_dispatch_scratch_base_lo compute_dispatch_scratch_base_hi
    compute_pgm_rsrc1 compute_pgm_rsrc2 compute_vmid compute_resource_limits compute_static_thread_mgmt_se0
    compute_static_thread_mgmt_se1 compute_tmpring_size compute_static_thread_mgmt_se2
    compute_static_thread_mgmt_se3 compute_restart_x compute_restart_y compute_restart_z
    compute_thread_trace_enable compute_misc_reserved compute_dispatch_id compute_threadgroup_id
    compute_req_ctrl reserved_36 compute_user_accum_0 compute_user_accum_1 compute_user_accum_2
    compute_user_accum_3 compute_pgm_rsrc3 compute_ddid_index compute_shader_chksum
    compute_static_thread_mgmt_se4 compute_static_thread_mgmt_se5 compute_static_thread_mgmt_se6
    compute_static_thread_mgmt_se7 compute_dispatch_interleave compute_relaunch compute_wave_restore_addr_lo
    compute_wave_restore_addr_hi compute_wave_restore_control reserved_53 reserved_54 reserved_55 reserved_56
    reserved_57 reserved_58 reserved_59 reserved_60 reserved_61 reserved_62 reserved_63 reserved_64
    compute_user_data_0 compute_user_data_1 compute_user_data_2 compute_user_data_3 compute_user_data_4
    compute_user_data_5 compute_user_data_6 compute_user_data_7 compute_user_data_8 compute_user_data_9
    compute_user_data_10 compute_user_data_11 compute_user_data_12 compute_user_data_13 compute_user_data_14
    compute_user_data_15 cp_compute_csinvoc_count_lo cp_compute_csinvoc_count_hi reserved_83 reserved_84
    reserved_85 cp_mqd_query_time_lo cp_mqd_query_time_hi cp_mqd_connect_start_time_lo
    cp_mqd_connect_start_time_hi cp_mqd_connect_end_time_lo cp_mqd_connect_end_time_hi
    cp_mqd_connect_end_wf_count cp_mqd_connect_end_pq_rptr cp_mqd_connect_end_pq_wptr
    cp_mqd_connect_end_ib_rptr cp_mqd_readindex_lo cp_mqd_readindex_hi cp_mqd_save_start_time_lo
    cp_mqd_save_start_time_hi cp_mqd_save_end_time_lo cp_mqd_save_end_time_hi cp_mqd_restore_start_time_lo
    cp_mqd_restore_start_time_hi cp_mqd_restore_end_time_lo cp_mqd_restore_end_time_hi disable_queue
    reserved_107 gds_cs_ctxsw_cnt0 gds_cs_ctxsw_cnt1 gds_cs_ctxsw_cnt2 gds_cs_ctxsw_cnt3 reserved_112
    reserved_113 cp_pq_exe_status_lo cp_pq_exe_status_hi cp_packet_id_lo cp_packet_id_hi
    cp_packet_exe_status_lo cp_packet_exe_status_hi gds_save_base_addr_lo gds_save_base_addr_hi
    gds_save_mask_lo gds_save_mask_hi ctx_save_base_addr_lo ctx_save_base_addr_hi reserved_126 reserved_127
    cp_mqd_base_addr_lo cp_mqd_base_addr_hi cp_hqd_active cp_hqd_vmid cp_hqd_persistent_state
    cp_hqd_pipe_priority cp_hqd_queue_priority cp_hqd_quantum cp_hqd_pq_base_lo cp_hqd_pq_base_hi
    cp_hqd_pq_rptr cp_hqd_pq_rptr_report_addr_lo cp_hqd_pq_rptr_report_addr_hi cp_hqd_pq_wptr_poll_addr_lo
    cp_hqd_pq_wptr_poll_addr_hi cp_hqd_pq_doorbell_control reserved_144 cp_hqd_pq_control
    cp_hqd_ib_base_addr_lo cp_hqd_ib_base_addr_hi cp_hqd_ib_rptr cp_hqd_ib_control cp_hqd_iq_timer
    cp_hqd_iq_rptr cp_hqd_dequeue_request cp_hqd_dma_offload cp_hqd_sema_cmd cp_hqd_msg_type
    cp_hqd_atomic0_preop_lo cp_hqd_atomic0_preop_hi cp_hqd_atomic1_preop_lo cp_hqd_atomic1_preop_hi
    cp_hqd_hq_status0 cp_hqd_hq_control0 cp_mqd_control cp_hqd_hq_status1 cp_hqd_hq_control1
    cp_hqd_eop_base_addr_lo cp_hqd_eop_base_addr_hi cp_hqd_eop_control cp_hqd_eop_rptr cp_hqd_eop_wptr
    cp_hqd_eop_done_events cp_hqd_ctx_save_base_addr_lo cp_hqd_ctx_save_base_addr_hi cp_hqd_ctx_save_control
    cp_hqd_cntl_stack_offset cp_hqd_cntl_stack_size cp_hqd_wg_state_offset cp_hqd_ctx_save_size
    cp_hqd_gds_resource_state cp_hqd_error cp_hqd_eop_wptr_mem cp_hqd_aql_control cp_hqd_pq_wptr_lo
    cp_hqd_pq_wptr_hi reserved_184 reserved_185 reserved_186 reserved_187 reserved_188 reserved_189
    reserved_190 reserved_191 iqtimer_pkt_header iqtimer_pkt_dw0 iqtimer_pkt_dw1 iqtimer_pkt_dw2
    iqtimer_pkt_dw3 iqtimer_pkt_dw4 iqtimer_pkt_dw5 iqtimer_pkt_dw6 iqtimer_pkt_dw7 iqtimer_pkt_dw8
    iqtimer_pkt_dw9 iqtimer_pkt_dw10 iqtimer_pkt_dw11 iqtimer_pkt_dw12 iqtimer_pkt_dw13 iqtimer_pkt_dw14
    iqtimer_pkt_dw15 iqtimer_pkt_dw16 iqtimer_pkt_dw17 iqtimer_pkt_dw18 iqtimer_pkt_dw19 iqtimer_pkt_dw20
    iqtimer_pkt_dw21 iqtimer_pkt_dw22 iqtimer_pkt_dw23 iqtimer_pkt_dw24 iqtimer_pkt_dw25 iqtimer_pkt_dw26
    iqtimer_pkt_dw27 iqtimer_pkt_dw28 iqtimer_pkt_dw29 iqtimer_pkt_dw30 iqtimer_pkt_dw31 reserved_225
    reserved_226 reserved_227 set_resources_header set_resources_dw1 set_resources_dw2 set_resources_dw3
    set_resources_dw4 set_resources_dw5 set_resources_dw6 set_resources_dw7 reserved_236 reserved_237
    reserved_238 reserved_239 queue_doorbell_id0 queue_doorbell_id1 queue_doorbell_id2 queue_doorbell_id3
    queue_doorbell_id4 queue_doorbell_id5 queue_doorbell_id6 queue_doorbell_id7 queue_doorbell_id8
    queue_doorbell_id9 queue_doorbell_id10 queue_doorbell_id11 queue_doorbell_id12 queue_doorbell_id13
    queue_doorbell_id14 queue_doorbell_id15 control_buf_addr_lo control_buf_addr_hi control_buf_wptr_lo
    control_buf_wptr_hi control_buf_dptr_lo control_buf_dptr_hi control_buf_num_entries draw_ring_addr_lo
    draw_ring_addr_hi reserved_265 reserved_266 reserved_267 reserved_268 reserved_269 reserved_270
    reserved_271 reserved_272 reserved_273 reserved_274 reserved_275 reserved_276 reserved_277 reserved_278
    reserved_279 reserved_280 reserved_281 reserved_282 reserved_283 reserved_284 reserved_285 reserved_286
    reserved_287 reserved_288 reserved_289 reserved_290 reserved_291 reserved_292 reserved_293 reserved_294
    reserved_295 reserved_296 reserved_297 reserved_298 reserved_299 reserved_300 reserved_301 reserved_302
    reserved_303 reserved_304 reserved_305 reserved_306 reserved_307 reserved_308 reserved_309 reserved_310
    reserved_311 reserved_312 reserved_313 reserved_314 reserved_315 reserved_316 reserved_317 reserved_318
    reserved_319 reserved_320 reserved_321 reserved_322 reserved_323 reserved_324 reserved_325 reserved_326
    reserved_327 reserved_328 reserved_329 reserved_330 reserved_331 reserved_332 reserved_333 reserved_334
    reserved_335 reserved_336 reserved_337 reserved_338 reserved_339 reserved_340 reserved_341 reserved_342
    reserved_343 reserved_344 reserved_345 reserved_346 reserved_347 reserved_348 reserved_349 reserved_350
    reserved_351 reserved_352 reserved_353 reserved_354 reserved_355 reserved_356 reserved_357 reserved_358
    reserved_359 reserved_360 reserved_361 reserved_362 reserved_363 reserved_364 reserved_365 reserved_366
    reserved_367 reserved_368 reserved_369 reserved_370 reserved_371 reserved_372 reserved_373 reserved_374
    reserved_375 reserved_376 reserved_377 reserved_378 reserved_379 reserved_380 reserved_381 reserved_382
    reserved_383 reserved_384 reserved_385 reserved_386 reserved_387 reserved_388 reserved_389 reserved_390
    reserved_391 reserved_392 reserved_393 reserved_394 reserved_395 reserved_396 reserved_397 reserved_398
    reserved_399 reserved_400 reserved_401 reserved_402 reserved_403 reserved_404 reserved_405 reserved_406
    reserved_407 reserved_408 reserved_409 reserved_410 reserved_411 reserved_412 reserved_413 reserved_414
    reserved_415 reserved_416 reserved_417 reserved_418 reserved_419 reserved_420 reserved_421 reserved_422
    reserved_423 reserved_424 reserved_425 reserved_426 reserved_427 reserved_428 reserved_429 reserved_430
    reserved_431 reserved_432 reserved_433 reserved_434 reserved_435 reserved_436 reserved_437 reserved_438
    reserved_439 reserved_440 reserved_441 reserved_442 reserved_443 reserved_444 reserved_445 reserved_446
    reserved_447 gws_0_val gws_1_val gws_2_val gws_3_val gws_4_val gws_5_val gws_6_val gws_7_val gws_8_val
    gws_9_val gws_10_val gws_11_val gws_12_val gws_13_val gws_14_val gws_15_val gws_16_val gws_17_val
    gws_18_val gws_19_val gws_20_val gws_21_val gws_22_val gws_23_val gws_24_val gws_25_val gws_26_val
    gws_27_val gws_28_val gws_29_val gws_30_val gws_31_val gws_32_val gws_33_val gws_34_val gws_35_val
    gws_36_val gws_37_val gws_38_val gws_39_val gws_40_val gws_41_val gws_42_val gws_43_val gws_44_val
    gws_45_val gws_46_val gws_47_val gws_48_val gws_49_val gws_50_val gws_51_val gws_52_val gws_53_val
    gws_54_val gws_55_val gws_56_val gws_57_val gws_58_val gws_59_val gws_60_val gws_61_val gws_62_val
    gws_63_val
""".split()


class v11_compute_mqd(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint32) for name in _FIELDS]


assert ctypes.sizeof(v11_compute_mqd) == 2048
HQD_IMAGE_FIRST = v11_compute_mqd.cp_mqd_base_addr_lo.offset // 4    # dword 128 <-> regCP_MQD_BASE_ADDR
HQD_IMAGE_DWORDS = v11_compute_mqd.cp_hqd_pq_wptr_hi.offset // 4 - HQD_IMAGE_FIRST + 1   # 56 registers

# GRBM_GFX_CNTL: which ME / pipe / queue the banked HQD registers address
GRBM_GFX_CNTL__PIPEID, GRBM_GFX_CNTL__MEID, GRBM_GFX_CNTL__VMID = Field(0, 2), Field(2, 2), Field(4, 4)
GRBM_GFX_CNTL__QUEUEID = Field(8, 3)
CP_HQD_VMID__VMID = Field(0, 4)
CP_HQD_ACTIVE__ACTIVE = Field(0, 1)
CP_HQD_PQ_CONTROL__QUEUE_SIZE = Field(0, 6)        # ring of 2 ** (QUEUE_SIZE + 1) dwords
CP_HQD_PQ_CONTROL__RPTR_BLOCK_SIZE = Field(8, 6)
CP_HQD_PQ_CONTROL__UNORD_DISPATCH = Field(28, 1)
CP_HQD_PQ_CONTROL__PRIV_STATE = Field(30, 1)
CP_HQD_PQ_CONTROL__KMD_QUEUE = Field(31, 1)
CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET = Field(2, 26)   # in dwords of the doorbell BAR
CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN = Field(30, 1)
CP_HQD_EOP_CONTROL__EOP_SIZE = Field(0, 6)          # 2 ** (EOP_SIZE + 1) dwords
CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ = Field(0, 4)
CP_MEC_DOORBELL_RANGE__OFFSET = Field(2, 10)        # LOWER / UPPER, in dwords

# per-VMID shader memory config (SH_MEM_CONFIG / SH_MEM_BASES): 64-bit addressing, unaligned access, and
# the flat apertures' bits 63:48 (amdgpu / amdkfd put LDS at 1 << 48 and scratch at 2 << 48)
SH_MEM_CONFIG__ADDRESS_MODE = Field(0, 1)           # 0: SH_MEM_ADDRESS_MODE_64
SH_MEM_CONFIG__ALIGNMENT_MODE = Field(2, 2)         # 3: SH_MEM_ALIGNMENT_MODE_UNALIGNED
SH_MEM_CONFIG__INITIAL_INST_PREFETCH = Field(14, 2)
SH_MEM_ALIGNMENT_MODE_UNALIGNED = 3
SH_MEM_BASES__PRIVATE_BASE = Field(0, 16)
SH_MEM_BASES__SHARED_BASE = Field(16, 16)

# SDMA queue ring (SDMA0_QUEUE0_RB_CNTL / _DOORBELL / _DOORBELL_OFFSET, sdma_6_0_0_sh_mask.h, same in 7.0)
SDMA_QUEUE_RB_CNTL__RB_ENABLE = Field(0, 1)
SDMA_QUEUE_RB_CNTL__RB_SIZE = Field(1, 5)           # ring of 2 ** RB_SIZE dwords
SDMA_QUEUE_RB_CNTL__RPTR_WRITEBACK_ENABLE = Field(12, 1)
SDMA_QUEUE_RB_CNTL__RB_VMID = Field(24, 4)
SDMA_QUEUE_DOORBELL__ENABLE = Field(28, 1)
SDMA_QUEUE_DOORBELL_OFFSET__OFFSET = Field(2, 26)   # in dwords of the doorbell BAR

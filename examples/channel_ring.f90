! NAME    channel_ring_f: asynchronous Jacobi on a chain of ranks, the halo
!         exchange done through asyncsolve channels, in Fortran.
!
! PURPOSE Show the Fortran module asyncsolve_channel (the C API of
!         include/asyncsolve/channel.h through ISO_C_BINDING) with mpi_f08.
!         The same program as examples/channel_ring.c: rank r owns `points`
!         unknowns of the 1D Laplace problem u'' = 0 on (0,1), u(0) = 0,
!         u(1) = 1, plus one ghost value per side; neighbours exchange their
!         boundary values through one channel each and never wait for each
!         other (a send is skipped when the channel is full, a ghost value is
!         refreshed only when a newer one has arrived). --rma runs the
!         channels over MPI-3 one-sided communication instead of two-sided.
!
! USAGE   mpiexec -n 4 channel_ring_f [--racy] [--rma] [--iterations N] [--points N]
!
! OUTPUT  One line from rank 0 with the channel traffic and the self-check;
!         exit status 0 if it passed, 1 if not, 2 for bad arguments.
!
! Self-check, as in the C program: every message carries the sender's value,
! its iteration ("stamp") and a checksum of both; a delivered message must be
! intact, its stamp must have advanced by at least the batch size (sends may
! be skipped, never reordered; racy over rma, where a message may be torn,
! only: the stamp never goes back), no send may block, the channel's counters
! must agree with the program's, and after the channels are destroyed
! synchronous Jacobi (MPI_Sendrecv + MPI_Allreduce) must converge to the
! exact discrete solution u_i = x_i.
program channel_ring_f
  use, intrinsic :: iso_c_binding, only: c_associated, c_double, c_int, c_int64_t, c_loc, &
                                         c_size_t, c_sizeof
  use, intrinsic :: iso_fortran_env, only: error_unit, output_unit
  use mpi_f08
  use asyncsolve_channel
  implicit none

  integer, parameter :: left = 1, right = 2
  integer(c_int), parameter :: max_in_flight = 4  ! unacknowledged messages per direction

  ! One halo message, 3 x 8 bytes: valid in racy mode too (a multiple of 8
  ! bytes, 8-byte aligned).
  type, bind(C) :: halo
    real(c_double) :: value = 0.0_c_double  ! the neighbour's boundary value ...
    integer(c_int64_t) :: stamp = 0         ! ... at this iteration (0: the initial guess)
    integer(c_int64_t) :: check = 0         ! checksum(value, stamp)
  end type halo

  type(MPI_Comm) :: comm, channel_comm
  integer :: rank, size, n, a, s, c, nchannels
  integer :: side(2), peer(2)
  logical :: racy, rma, bad_args
  integer(c_int64_t) :: iterations, t, last_stamp(2)
  integer(c_int) :: ready, batch, free_slot, max_batch, max_batch_all
  integer(c_int), parameter :: transport_names(2) = [AS_TRANSPORT_MPI, AS_TRANSPORT_RMA]
  real(c_double), allocatable :: u(:), u_new(:)
  type(halo), target, asynchronous :: out(2), in(2)  ! the channels read and write them
  type(as_channel) :: channel(2)
  type(as_channel_config) :: config(2)
  type(as_channel_stats) :: stats
  integer(c_int64_t) :: sent, skipped, batches, messages, discarded, bad, counted_sent
  integer(c_int64_t) :: counts(6), totals(6)
  real(c_double) :: update, local, error, x, max_error, tolerance
  integer(c_int64_t) :: sync_iterations, global_n
  integer :: failed
  character(len=64) :: arg
  character(len=:), allocatable :: verdict

  call MPI_Init()
  comm = MPI_COMM_WORLD
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, size)

  racy = .false.
  rma = .false.
  bad_args = .false.
  iterations = 5000
  n = 8
  a = 1
  do while (a <= command_argument_count())
    call get_command_argument(a, arg)
    select case (trim(arg))
    case ("--racy")
      racy = .true.
    case ("--rma")
      rma = .true.
    case ("--iterations", "--points")
      if (a == command_argument_count()) then
        bad_args = .true.
        exit
      end if
      block
        character(len=64) :: value
        integer :: number, io
        call get_command_argument(a + 1, value)
        read (value, *, iostat=io) number
        if (io /= 0) bad_args = .true.
        if (trim(arg) == "--iterations") then
          iterations = number
        else
          n = number
        end if
      end block
      a = a + 1
    case default
      bad_args = .true.
    end select
    a = a + 1
  end do
  if (bad_args .or. iterations < 0 .or. n < 1 .or. n > 1000000) then
    if (rank == 0) write (error_unit, '(a)') &
      "usage: channel_ring_f [--racy] [--rma] [--iterations N] [--points N]"
    call MPI_Finalize()
    stop 2, quiet=.true.
  end if

  ! The channels get a communicator of their own (their tags can then never
  ! meet the application's messages of the synchronous phase below).
  call MPI_Comm_dup(comm, channel_comm)

  ! u(0) and u(n+1) are ghosts: a neighbour's value, or the fixed boundary
  ! value 0 (left end of the chain) or 1 (right end).
  global_n = int(size, c_int64_t) * n
  allocate (u(0:n + 1), u_new(0:n + 1))
  u = 0.0_c_double
  peer(left) = merge(rank - 1, MPI_PROC_NULL, rank > 0)
  peer(right) = merge(rank + 1, MPI_PROC_NULL, rank < size - 1)
  if (peer(right) == MPI_PROC_NULL) u(n + 1) = 1.0_c_double
  u_new = u
  do s = left, right
    in(s) = make_halo(0.0_c_double, 0_c_int64_t)
  end do

  ! One channel per neighbour; out(s) and in(s) are its buffers, ours, used
  ! by the channel until it is destroyed.
  nchannels = 0
  do s = left, right
    if (peer(s) == MPI_PROC_NULL) cycle
    nchannels = nchannels + 1
    call as_channel_config_init(config(nchannels))
    config(nchannels)%transport = transport_names(merge(2, 1, rma))
    config(nchannels)%comm = channel_comm%MPI_VAL
    config(nchannels)%peer = peer(s)
    config(nchannels)%tag = 0
    config(nchannels)%message_size = int(c_sizeof(out(s)), c_size_t)
    config(nchannels)%sendbuf = c_loc(out(s))
    config(nchannels)%recvbuf = c_loc(in(s))
    config(nchannels)%max_in_flight = max_in_flight
    config(nchannels)%mode = merge(AS_MODE_RACY, AS_MODE_ASYNC, racy)
    side(nchannels) = s
  end do
  ! rma channels are created collectively over the communicator: a rank
  ! without neighbours (a chain of one) passes one placeholder.
  if (rma .and. nchannels == 0) then
    call as_channel_config_init(config(1))
    config(1)%transport = AS_TRANSPORT_RMA
    config(1)%comm = channel_comm%MPI_VAL
    config(1)%peer = MPI_PROC_NULL
    call check(as_channels_create(1_c_int, channel, config), "as_channels_create")
  else
    ! Both neighbours in one call: no ordering between ranks to get right.
    call check(as_channels_create(int(nchannels, c_int), channel, config), "as_channels_create")
  end if

  ! Asynchronous phase. Per iteration: at most one 24-byte message to each
  ! neighbour, no waiting and no reduction.
  sent = 0
  skipped = 0
  batches = 0
  messages = 0
  bad = 0
  max_batch = 0
  last_stamp = 0
  do t = 1, iterations
    ! Take the newest halo from each neighbour, if one has arrived.
    do c = 1, nchannels
      s = side(c)
      call check(as_channel_can_recv(channel(c), ready), "as_channel_can_recv")
      if (ready == 0) cycle
      call check(as_channel_recv(channel(c), batch), "as_channel_recv")
      if (batch == 0) cycle  ! racy: can_recv is always 1
      batches = batches + 1
      messages = messages + batch
      max_batch = max(max_batch, batch)
      if (racy .and. rma) then
        ! Racy over rma: messages land element by element in one slot that
        ! the next message may already be overwriting, so a delivered
        ! message can mix 8-byte elements of consecutive messages (as the
        ! mode allows). Each element is still one some message carried: the
        ! stamp never goes back.
        if (in(s)%stamp < last_stamp(s) .or. in(s)%stamp > iterations) bad = bad + 1
      else if (in(s)%check /= checksum(in(s)%value, in(s)%stamp) .or. &
               in(s)%stamp - last_stamp(s) < batch .or. in(s)%stamp > iterations) then
        ! in(s) is the newest of `batch` messages whose stamps increased.
        bad = bad + 1
      end if
      last_stamp(s) = in(s)%stamp
      if (s == left) then
        u(0) = in(s)%value
      else
        u(n + 1) = in(s)%value
      end if
    end do

    ! u_new_i = (u_{i-1} + u_{i+1}) / 2
    u_new(0) = u(0)
    u_new(n + 1) = u(n + 1)
    u_new(1:n) = 0.5_c_double*(u(0:n - 1) + u(2:n + 1))
    u = u_new

    ! Offer the new boundary values; skip a neighbour whose channel is full.
    do c = 1, nchannels
      s = side(c)
      call check(as_channel_can_send(channel(c), free_slot), "as_channel_can_send")
      if (free_slot == 0) then
        skipped = skipped + 1
        cycle
      end if
      if (s == left) then
        out(s) = make_halo(u(1), t)
      else
        out(s) = make_halo(u(n), t)
      end if
      call check(as_channel_send(channel(c)), "as_channel_send")  ! out(s) reusable now
      sent = sent + 1
    end do
  end do

  ! The channel's counters must agree with ours, and no send may have
  ! blocked: we sent only when can_send said there was room.
  discarded = 0
  counted_sent = 0
  do c = 1, nchannels
    call check(as_channel_get_stats(channel(c), stats), "as_channel_get_stats")
    if (stats%blocked_sends /= 0) bad = bad + 1
    counted_sent = counted_sent + stats%sent
    discarded = discarded + stats%discarded
  end do
  if (counted_sent /= sent) bad = bad + 1
  ! Collective with each neighbour (rma: over channel_comm): completes every
  ! message in flight, leaving nothing outstanding in MPI.
  if (rma .and. nchannels == 0) then
    call check(as_channels_destroy(1_c_int, channel), "as_channels_destroy")
  else
    call check(as_channels_destroy(int(nchannels, c_int), channel), "as_channels_destroy")
  end if
  ! Destroy nulls the handles.
  do c = 1, 2
    if (c_associated(channel(c)%handle)) bad = bad + 1
  end do
  call MPI_Comm_free(channel_comm)

  ! Synchronous phase: plain Jacobi to convergence. Per iteration: one
  ! 8-byte message each way per neighbour and one MPI_Allreduce (max).
  tolerance = 1.0e-13_c_double  ! on the largest update
  sync_iterations = 0
  update = 1.0_c_double
  do while (update > tolerance .and. sync_iterations < 10000000)
    call MPI_Sendrecv(u(1), 1, MPI_DOUBLE_PRECISION, peer(left), 0, u(n + 1), 1, &
                      MPI_DOUBLE_PRECISION, peer(right), 0, comm, MPI_STATUS_IGNORE)
    call MPI_Sendrecv(u(n), 1, MPI_DOUBLE_PRECISION, peer(right), 1, u(0), 1, &
                      MPI_DOUBLE_PRECISION, peer(left), 1, comm, MPI_STATUS_IGNORE)
    u_new(1:n) = 0.5_c_double*(u(0:n - 1) + u(2:n + 1))  ! u_new = D^-1 (b - (A - D) u)
    local = maxval(abs(u_new(1:n) - u(1:n)))
    u(1:n) = u_new(1:n)
    call MPI_Allreduce(local, update, 1, MPI_DOUBLE_PRECISION, MPI_MAX, comm)
    sync_iterations = sync_iterations + 1
  end do
  if (update > tolerance) bad = bad + 1

  ! The exact discrete solution is linear: u_i = x_i = i / (N + 1); Jacobi's
  ! error is at most update / (1 - rho), with 1 - rho ~ pi^2 / (2 N^2).
  error = 0.0_c_double
  do a = 1, n
    x = real(int(rank, c_int64_t)*n + a, c_double)/real(global_n + 1, c_double)
    error = max(error, abs(u(a) - x))
  end do
  if (error > tolerance*real(global_n, c_double)**2) bad = bad + 1

  ! Totals over ranks, for the summary line.
  counts = [sent, skipped, batches, messages, discarded, bad]
  call MPI_Reduce(counts, totals, 6, MPI_INTEGER8, MPI_SUM, 0, comm)
  call MPI_Reduce(max_batch, max_batch_all, 1, MPI_INTEGER, MPI_MAX, 0, comm)
  call MPI_Reduce(error, max_error, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, comm)
  failed = 0
  if (rank == 0) then
    verdict = "Solution validates"
    if (totals(6) /= 0) then
      failed = 1
      verdict = "FAILED (bad messages, blocked sends or wrong solution)"
    end if
    write (output_unit, '(a,i0,4a,5(a,i0),a,f0.2,3(a,i0),a,es8.1,2a)') &
      "channel_ring_f: ranks ", size, " transport ", trim(merge("rma", "mpi", rma)), &
      " mode ", trim(merge("racy ", "async", racy)), " max_in_flight ", max_in_flight, &
      " iterations ", iterations, " sent ", totals(1), " skipped ", totals(2), &
      " batches ", totals(3), " mean_batch ", &
      merge(real(totals(4), c_double)/real(max(totals(3), 1_c_int64_t), c_double), &
            0.0_c_double, totals(3) > 0), &
      " max_batch ", max_batch_all, " discarded ", totals(5), &
      " sync_iterations ", sync_iterations, " max_error ", max_error, ": ", verdict
  end if
  call MPI_Bcast(failed, 1, MPI_INTEGER, 0, comm)

  deallocate (u, u_new)
  call MPI_Finalize()
  if (failed /= 0) stop 1, quiet=.true.

contains

  !> A checksum of a message's contents: the value's bits mixed with the
  !> stamp (stamps stay far below 2**32, so the product cannot overflow).
  pure integer(c_int64_t) function checksum(value, stamp)
    real(c_double), intent(in) :: value
    integer(c_int64_t), intent(in) :: stamp
    checksum = ieor(transfer(value, 0_c_int64_t), stamp*2654435761_c_int64_t)
  end function checksum

  pure type(halo) function make_halo(value, stamp)
    real(c_double), intent(in) :: value
    integer(c_int64_t), intent(in) :: stamp
    make_halo%value = value
    make_halo%stamp = stamp
    make_halo%check = checksum(value, stamp)
  end function make_halo

  !> A failed channel call cannot be recovered from locally (the peer may be
  !> blocked in create or destroy, and sends cannot be cancelled): report and
  !> abort the job.
  subroutine check(code, call_name)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: call_name
    if (code == AS_SUCCESS) return
    write (error_unit, '(a,i0,a,a,a,a)') "channel_ring_f: rank ", rank, ": ", call_name, ": ", &
      as_strerror(code)
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end subroutine check

end program channel_ring_f

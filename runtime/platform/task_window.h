// Per-task records of a graph, indexed by task, that drop their oldest as the
// tasks retire: the window holds tasks [first(), size()), so what a graph
// keeps per task is bounded by the tasks still live, not by the tasks it ran (#49).
#pragma once

#include <cstddef>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>

namespace pfsim::rt {

template <class T>
class TaskWindow {
public:
    // Tasks [0, size()) were appended; those before first() were dropped.
    size_t size() const { return first_ + records_.size(); }
    size_t first() const { return first_; }
    bool held(size_t task) const { return task >= first_ && task < size(); }
    bool empty() const { return records_.empty(); }  // no task held (some may have been dropped)

    // Task `task`'s record; std::logic_error for a task dropped or not appended yet.
    T& operator[](size_t task) { return records_[index(task)]; }
    const T& operator[](size_t task) const { return records_[index(task)]; }
    T& front() { return records_.front(); }
    const T& front() const { return records_.front(); }
    typename std::deque<T>::iterator begin() { return records_.begin(); }
    typename std::deque<T>::iterator end() { return records_.end(); }
    typename std::deque<T>::const_iterator begin() const { return records_.begin(); }
    typename std::deque<T>::const_iterator end() const { return records_.end(); }

    void push_back(T record) { records_.push_back(std::move(record)); }
    template <class... A>
    T& emplace_back(A&&... a) {
        return records_.emplace_back(std::forward<A>(a)...);
    }
    // Appends default records until size() is `tasks` (never drops).
    void grow_to(size_t tasks) {
        if (tasks > size()) records_.resize(tasks - first_);
    }
    // Drops the oldest record held.
    void pop_front() {
        records_.pop_front();
        ++first_;
    }

private:
    size_t index(size_t task) const {
        if (!held(task)) {
            throw std::logic_error("task " + std::to_string(task) + "'s record is not held (tasks " +
                                   std::to_string(first_) + " to " + std::to_string(size()) + ")");
        }
        return task - first_;
    }

    size_t first_ = 0;
    std::deque<T> records_;
};

}  // namespace pfsim::rt
